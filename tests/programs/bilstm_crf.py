# A BiLSTM-CRF tagger (the classic NER tutorial): emission scores from a bidirectional LSTM, a transition
# matrix Parameter, the CRF partition function by the forward algorithm with logsumexp, the gold path score
# with gather, SGD with weight decay, and Viterbi decoding with max/argmax and a Python backtrace.
import torch
import torch.nn as nn

START, STOP = 3, 4
NUM_TAGS = 5


class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab=12, emb=6, hidden=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden // 2, num_layers=1, bidirectional=True)
        self.hidden2tag = nn.Linear(hidden, NUM_TAGS)
        self.transitions = nn.Parameter(torch.randn(NUM_TAGS, NUM_TAGS))
        self.transitions.data[START, :] = -10000
        self.transitions.data[:, STOP] = -10000

    def features(self, sentence):
        out, _ = self.lstm(self.embed(sentence).view(len(sentence), 1, -1))
        return self.hidden2tag(out.view(len(sentence), -1))

    def forward_alg(self, feats):
        alpha = torch.full((1, NUM_TAGS), -10000.0)
        alpha[0][START] = 0.0
        for feat in feats:
            alpha = torch.logsumexp(alpha.view(1, -1) + self.transitions + feat.view(-1, 1), dim=1).view(1, -1)
        return torch.logsumexp(alpha + self.transitions[STOP], dim=1)[0]

    def score_sentence(self, feats, tags):
        tags = torch.cat([torch.tensor([START], dtype=torch.long), tags])
        score = self.transitions[tags[1:], tags[:-1]].sum() + feats.gather(1, tags[1:].view(-1, 1)).sum()
        return score + self.transitions[STOP, tags[-1]]

    def neg_log_likelihood(self, sentence, tags):
        feats = self.features(sentence)
        return self.forward_alg(feats) - self.score_sentence(feats, tags)

    def forward(self, sentence):
        feats = self.features(sentence)
        backpointers = []
        vvars = torch.full((1, NUM_TAGS), -10000.0)
        vvars[0][START] = 0
        for feat in feats:
            scores = vvars + self.transitions            # (next, prev)
            best, idx = scores.max(dim=1)
            backpointers.append(idx.tolist())
            vvars = (best + feat).view(1, -1)
        terminal = vvars + self.transitions[STOP]
        best_tag = int(torch.argmax(terminal))
        path_score = terminal[0][best_tag]
        path = [best_tag]
        for bptrs in reversed(backpointers):
            best_tag = bptrs[best_tag]
            path.append(best_tag)
        assert path.pop() == START
        path.reverse()
        return path_score, path


torch.manual_seed(1)
data = [(torch.randint(0, 12, (n,)), torch.randint(0, 3, (n,))) for n in (5, 7, 4, 6)]
model = BiLSTM_CRF()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, weight_decay=1e-4)
with torch.no_grad():
    score, path = model(data[0][0])
    print(f"before: score {score.item():.4f} path {path}")
for epoch in range(6):
    total = 0.0
    for sentence, tags in data:
        model.zero_grad()
        loss = model.neg_log_likelihood(sentence, tags)
        loss.backward()
        optimizer.step()
        total += loss.item()
    if epoch % 2 == 1:
        print(f"epoch {epoch} nll {total:.4f}")
with torch.no_grad():
    for sentence, tags in data[:2]:
        score, path = model(sentence)
        print(f"score {score.item():.4f} path {path} gold {tags.tolist()}")
