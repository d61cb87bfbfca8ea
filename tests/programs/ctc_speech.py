# A tiny speech-recognition head trained with CTC: a BiGRU over frame features, log_softmax over
# (T, N, C), nn.CTCLoss with padded targets of different lengths, and greedy CTC decoding.
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self, feats=8, hidden=16, classes=5):
        super().__init__()
        self.rnn = nn.GRU(feats, hidden, batch_first=True, bidirectional=True)
        self.out = nn.Linear(2 * hidden, classes)

    def forward(self, x):
        h, _ = self.rnn(x)
        return self.out(h).log_softmax(-1).transpose(0, 1)  # (T, N, C)


torch.manual_seed(0)
N, T = 3, 12
x = torch.randn(N, T, 8)
targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [2, 3, 1, 0]])
target_lengths = torch.tensor([4, 2, 3])
input_lengths = torch.tensor([12, 10, 11])
model = Head()
ctc = nn.CTCLoss(blank=0, zero_infinity=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(8):
    opt.zero_grad()
    lp = model(x)
    loss = ctc(lp, targets, input_lengths, target_lengths)
    loss.backward()
    opt.step()
    print(f"{step}: ctc {loss.item():.4f}")
lp = model(x)
for red in ["none", "sum", "mean"]:
    print(red, nn.functional.ctc_loss(lp, targets, input_lengths, target_lengths, reduction=red).detach())
flat = torch.cat([targets[i, : target_lengths[i]] for i in range(N)])
print("concat targets", nn.functional.ctc_loss(lp, flat, input_lengths, target_lengths).item())
best = lp.argmax(-1).transpose(0, 1)
for seq in best.tolist():
    out, prev = [], None
    for s in seq:
        if s != prev and s != 0:
            out.append(s)
        prev = s
    print("decoded", out)
