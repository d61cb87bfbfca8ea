# Deep knowledge tracing: students' variable-length answer sequences (skill id, correct) encoded as
# 2*skill+correct tokens, padded with pad_sequence, a bidirectional batch_first LSTM, a masked BCE loss on
# the next answer via gather on the skill logits, an AUC computed by hand with argsort ranks.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence

torch.manual_seed(0)
n_skills = 5
difficulty = torch.tensor([-1.0, -0.5, 0.0, 0.5, 1.0])

students = []
for s in range(24):
    ability = torch.randn(1).item()
    length = 6 + s % 7
    skills = torch.randint(0, n_skills, (length,))
    p = torch.sigmoid(ability - difficulty[skills] + 0.1 * torch.arange(length))
    correct = (torch.rand(length) < p).long()
    students.append((skills, correct))

lengths = torch.tensor([len(s) for s, _ in students])
tokens = pad_sequence([s * 2 + c + 1 for s, c in students], batch_first=True, padding_value=0)
skills = pad_sequence([s for s, _ in students], batch_first=True, padding_value=0)
correct = pad_sequence([c for _, c in students], batch_first=True, padding_value=-1)
print(f"batch {tuple(tokens.shape)}, lengths min {lengths.min().item()} max {lengths.max().item()}")


class DKT(nn.Module):
    def __init__(self, hidden=24):
        super().__init__()
        self.emb = nn.Embedding(2 * n_skills + 1, 16, padding_idx=0)
        self.lstm = nn.LSTM(16, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, n_skills)

    def forward(self, x):
        out, (h, c) = self.lstm(self.emb(x))
        return self.head(out), h


model = DKT()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
# predict the answer at step t+1 from tokens up to... (bidirectional: from the whole prefix window as input)
inp, next_skill, next_correct = tokens[:, :-1], skills[:, 1:], correct[:, 1:]
mask = next_correct >= 0


def auc(scores, labels):
    order = scores.argsort()
    ranks = torch.empty_like(order, dtype=torch.float)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float)
    pos = labels == 1
    n_pos, n_neg = pos.sum().item(), (~pos).sum().item()
    return (ranks[pos].sum().item() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


for epoch in range(30):
    logits, h = model(inp)
    picked = logits.gather(2, next_skill.unsqueeze(-1)).squeeze(-1)
    loss = F.binary_cross_entropy_with_logits(picked[mask], next_correct[mask].float())
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_norm=2.0)
    opt.step()
    if epoch % 10 == 9:
        with torch.no_grad():
            a = auc(picked[mask].detach(), next_correct[mask])
        print(f"epoch {epoch + 1} loss {loss.item():.4f} auc {a:.4f} h {tuple(h.shape)}")

with torch.no_grad():
    logits, _ = model(inp)
    probs = torch.sigmoid(logits)
    last = probs[torch.arange(len(students)), lengths - 2]
print("mastery of student 0", [round(v, 3) for v in last[0].tolist()])
print(f"padding embedding zero: {model.emb.weight[0].abs().sum().item() == 0.0}")
