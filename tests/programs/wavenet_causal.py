# An autoregressive WaveNet: dilated causal Conv1d layers (left padding with F.pad), gated tanh*sigmoid
# units, residual and skip connections, mu-law quantisation of a waveform, teacher-forced training with
# cross_entropy over 32 classes, then sample-by-sample generation with a receptive-field window.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
Q = 32


def mu_law_encode(x, q=Q):
    mu = q - 1
    y = torch.sign(x) * torch.log1p(mu * x.abs()) / math.log1p(mu)
    return ((y + 1) / 2 * mu + 0.5).long().clamp(0, mu)


def mu_law_decode(idx, q=Q):
    mu = q - 1
    y = 2 * idx.float() / mu - 1
    return torch.sign(y) * ((1 + mu) ** y.abs() - 1) / mu


class CausalConv1d(nn.Conv1d):
    def __init__(self, cin, cout, kernel_size, dilation=1):
        super().__init__(cin, cout, kernel_size, dilation=dilation)
        self.left = (kernel_size - 1) * dilation

    def forward(self, x):
        return super().forward(F.pad(x, (self.left, 0)))


class ResidualBlock(nn.Module):
    def __init__(self, ch, dilation):
        super().__init__()
        self.filter = CausalConv1d(ch, ch, 2, dilation)
        self.gate = CausalConv1d(ch, ch, 2, dilation)
        self.res = nn.Conv1d(ch, ch, 1)
        self.skip = nn.Conv1d(ch, ch, 1)

    def forward(self, x):
        z = torch.tanh(self.filter(x)) * torch.sigmoid(self.gate(x))
        return x + self.res(z), self.skip(z)


class WaveNet(nn.Module):
    def __init__(self, ch=16, dilations=(1, 2, 4, 8)):
        super().__init__()
        self.embed = nn.Embedding(Q, ch)
        self.blocks = nn.ModuleList(ResidualBlock(ch, d) for d in dilations)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(ch, ch, 1), nn.ReLU(), nn.Conv1d(ch, Q, 1))
        self.receptive_field = sum(dilations) + 1

    def forward(self, idx):
        x = self.embed(idx).transpose(1, 2)
        skips = 0
        for block in self.blocks:
            x, s = block(x)
            skips += s
        return self.out(skips)


t = torch.linspace(0, 8 * math.pi, 257)
wave = 0.8 * torch.sin(t) * torch.cos(0.25 * t)
codes = mu_law_encode(wave)
print(f"codes range {codes.min().item()}..{codes.max().item()}, roundtrip err {(mu_law_decode(codes) - wave).abs().max():.4f}")
inputs, targets = codes[:-1].unsqueeze(0), codes[1:].unsqueeze(0)

model = WaveNet()
print(f"receptive field {model.receptive_field}, params {sum(p.numel() for p in model.parameters())}")
# causality: changing a future input must not change earlier outputs
with torch.no_grad():
    a = model(inputs)
    changed = inputs.clone()
    changed[0, 100] = (changed[0, 100] + 5) % Q
    b = model(changed)
    print(f"causal: {torch.equal(a[..., :100], b[..., :100])}, affected after: {not torch.equal(a[..., 100:], b[..., 100:])}")

opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.97)
for step in range(40):
    logits = model(inputs)
    loss = F.cross_entropy(logits, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 10 == 0 or step == 39:
        acc = (logits.argmax(1) == targets).float().mean().item()
        print(f"step {step:2d} loss {loss.item():.4f} acc {acc:.3f}")

model.eval()
generated = codes[: model.receptive_field].tolist()
with torch.no_grad():
    for _ in range(20):
        window = torch.tensor(generated[-model.receptive_field:]).unsqueeze(0)
        nxt = model(window)[0, :, -1].argmax().item()
        generated.append(nxt)
print("greedy continuation", generated[model.receptive_field:])
print("true continuation  ", codes[model.receptive_field: model.receptive_field + 20].tolist())
