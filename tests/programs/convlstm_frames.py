# A ConvLSTM predicting the next frame of moving blobs: gates from one Conv2d over the concatenated input and
# hidden state split with torch.chunk, sequences processed step by step with the state carried, teacher forcing
# during training, autoregressive rollout under torch.no_grad(), and BCE-with-logits on the frames.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch, hid_ch, k=3):
        super().__init__()
        self.hid_ch = hid_ch
        self.gates = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, k, padding=k // 2)

    def forward(self, x, state):
        h, c = state
        i, f, o, g = torch.chunk(self.gates(torch.cat([x, h], dim=1)), 4, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, (h, c)

    def init_state(self, x):
        b, _, hgt, wid = x.shape
        z = x.new_zeros(b, self.hid_ch, hgt, wid)
        return z, z.clone()


class FramePredictor(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = ConvLSTMCell(1, 8)
        self.out = nn.Conv2d(8, 1, 1)

    def forward(self, frames, future=0):
        state = self.cell.init_state(frames[:, 0])
        preds = []
        for t in range(frames.size(1)):
            h, state = self.cell(frames[:, t], state)
            preds.append(self.out(h))
        for _ in range(future):
            h, state = self.cell(torch.sigmoid(preds[-1]), state)
            preds.append(self.out(h))
        return torch.stack(preds, dim=1)


def moving_blobs(n, T=6, size=8):
    pos = torch.randint(0, size - 2, (n,))
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    frames = []
    for t in range(T):
        x = (pos + t) % size
        frames.append(((xx[None] - x[:, None, None]).abs() <= 1) & ((yy[None] - 3).abs() <= 1))
    return torch.stack(frames, dim=1).unsqueeze(2).float()


torch.manual_seed(0)
seq = moving_blobs(8)
model = FramePredictor()
opt = torch.optim.RMSprop(model.parameters(), lr=3e-3)
for epoch in range(20):
    logits = model(seq[:, :-1])
    loss = F.binary_cross_entropy_with_logits(logits, seq[:, 1:])
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_value_(model.parameters(), 1.0)
    opt.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f}")
model.eval()
with torch.no_grad():
    rollout = torch.sigmoid(model(seq[:2, :3], future=2))
    err = (rollout[:, 3:] - seq[:2, 3:5]).abs().mean()
    print(f"rollout shape {tuple(rollout.shape)}, error of the two predicted frames {err.item():.4f}")
    print((rollout[0, -1, 0] > 0.5).int())
