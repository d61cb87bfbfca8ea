# A 1-D Fourier neural operator learning the solution map of a smoothing PDE: spectral convolution with
# torch.fft.rfft / irfft(n=...), complex weights as nn.Parameter(torch.randn(..., dtype=torch.cfloat)),
# einsum over complex tensors, truncation to the lowest modes, a pointwise 1x1 Conv1d path, GELU,
# relative L2 loss, and an evaluation at a finer grid (the operator is resolution-independent).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_data(n, grid):
    x = torch.linspace(0, 1, grid + 1)[:-1]
    k = torch.arange(1, 6).float()
    coef = torch.randn(n, 5) / k
    u0 = (coef.unsqueeze(-1) * torch.sin(2 * math.pi * k.view(1, 5, 1) * x)).sum(1)
    u1 = (coef.unsqueeze(-1) * torch.exp(-0.05 * (2 * math.pi * k.view(1, 5, 1)) ** 2 / 10) *
          torch.sin(2 * math.pi * k.view(1, 5, 1) * x)).sum(1)
    return u0.unsqueeze(1), u1.unsqueeze(1)


class SpectralConv1d(nn.Module):
    def __init__(self, cin, cout, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (cin * cout)
        self.weight = nn.Parameter(scale * torch.randn(cin, cout, modes, dtype=torch.cfloat))

    def forward(self, x):
        n = x.shape[-1]
        xf = torch.fft.rfft(x)
        out = torch.zeros(x.shape[0], self.weight.shape[1], n // 2 + 1, dtype=torch.cfloat)
        out[:, :, : self.modes] = torch.einsum("bim,iom->bom", xf[:, :, : self.modes], self.weight)
        return torch.fft.irfft(out, n=n)


class FNO(nn.Module):
    def __init__(self, width=16, modes=8):
        super().__init__()
        self.lift = nn.Conv1d(1, width, 1)
        self.spectral = nn.ModuleList([SpectralConv1d(width, width, modes) for _ in range(2)])
        self.pointwise = nn.ModuleList([nn.Conv1d(width, width, 1) for _ in range(2)])
        self.proj = nn.Conv1d(width, 1, 1)

    def forward(self, u):
        h = self.lift(u)
        for spec, pw in zip(self.spectral, self.pointwise):
            h = F.gelu(spec(h) + pw(h))
        return self.proj(h)


def rel_l2(pred, target):
    return (torch.linalg.vector_norm(pred - target, dim=-1) / torch.linalg.vector_norm(target, dim=-1)).mean()


u0, u1 = make_data(64, 64)
model = FNO()
print("complex parameters:", sum(p.numel() for p in model.parameters() if p.is_complex()),
      "real parameters:", sum(p.numel() for p in model.parameters() if not p.is_complex()))
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.97)
for epoch in range(15):
    perm = torch.randperm(64)
    total = 0.0
    for i in range(0, 64, 16):
        idx = perm[i : i + 16]
        loss = rel_l2(model(u0[idx]), u1[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1} rel-L2 {total / 4:.4f} lr {sched.get_last_lr()[0]:.5f}")

with torch.no_grad():
    v0, v1 = make_data(8, 64)
    w0, w1 = make_data(8, 128)
    print(f"test rel-L2 at 64 points {rel_l2(model(v0), v1):.4f}, at 128 points {rel_l2(model(w0), w1):.4f}")
    g = model.spectral[0].weight
    print(f"spectral weight |w| mean {g.abs().mean():.4f} real std {g.real.std():.4f} imag std {g.imag.std():.4f}")
