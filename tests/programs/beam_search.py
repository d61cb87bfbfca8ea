# Beam search decoding from a small GRU language model trained on toy "counting" sequences: an nn.Embedding +
# nn.GRU(batch_first) + Linear model, CrossEntropyLoss over flattened logits, then beam search written the usual
# way: log_softmax scores, topk over the flattened (beam x vocab) scores, integer division and % to recover beam
# and token, index_select on the hidden state, finished hypotheses with a length penalty; greedy decoding compared.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
V, BOS, EOS = 12, 0, 1


def make_batch(n):
    seqs = []
    for _ in range(n):
        start = torch.randint(2, 7, (1,)).item()
        length = torch.randint(3, 6, (1,)).item()
        seqs.append([BOS] + list(range(start, start + length)) + [EOS])
    width = max(len(s) for s in seqs)
    out = torch.full((n, width), EOS, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s)
    return out


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(V, 16)
        self.rnn = nn.GRU(16, 32, batch_first=True)
        self.out = nn.Linear(32, V)

    def forward(self, tokens, h=None):
        o, h = self.rnn(self.emb(tokens), h)
        return self.out(o), h


model = LM()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
crit = nn.CrossEntropyLoss()
for step in range(60):
    batch = make_batch(32)
    logits, _ = model(batch[:, :-1])
    loss = crit(logits.reshape(-1, V), batch[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if step % 20 == 0:
        print(f"step {step} loss {loss.item():.4f}")


@torch.no_grad()
def beam_search(prefix, beam=3, max_len=8, alpha=0.7):
    model.eval()
    logits, h = model(torch.tensor([prefix]))
    logp = F.log_softmax(logits[:, -1], dim=-1)  # (1, V)
    scores, tokens = logp.topk(beam, dim=-1)
    seqs = [prefix + [t] for t in tokens[0].tolist()]
    scores = scores[0]
    h = h.repeat(1, beam, 1)
    finished = []
    for _ in range(max_len):
        last = torch.tensor([[s[-1]] for s in seqs])
        logits, h = model(last, h)
        cand = scores.unsqueeze(1) + F.log_softmax(logits[:, -1], dim=-1)  # (beam, V)
        top, flat = cand.view(-1).topk(beam)
        beam_idx, tok = flat // V, flat % V
        new_seqs, keep = [], []
        for b, t, s in zip(beam_idx.tolist(), tok.tolist(), top.tolist()):
            seq = seqs[b] + [t]
            if t == EOS:
                finished.append((s / (len(seq) ** alpha), seq))
            else:
                new_seqs.append(seq)
                keep.append((b, s))
        if not new_seqs:
            break
        seqs = new_seqs
        idx = torch.tensor([b for b, _ in keep])
        h = h.index_select(1, idx)
        scores = torch.tensor([s for _, s in keep])
    finished.sort(key=lambda p: p[0], reverse=True)
    return finished[:beam]


@torch.no_grad()
def greedy(prefix, max_len=8):
    tokens = torch.tensor([prefix])
    for _ in range(max_len):
        logits, _ = model(tokens)
        nxt = logits[0, -1].argmax()
        tokens = torch.cat([tokens, nxt.view(1, 1)], dim=1)
        if nxt.item() == EOS:
            break
    return tokens[0].tolist()


for prefix in ([BOS, 3], [BOS, 5, 6], [BOS, 2]):
    for score, seq in beam_search(prefix):
        print(f"beam {prefix} -> {seq} score {score:.4f}")
    print(f"greedy {prefix} -> {greedy(prefix)}")
