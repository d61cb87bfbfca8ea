# Linear attention with positive random features (Performer's FAVOR+): a fixed projection held by
# register_buffer, einsum-heavy kernels, causal prefix sums with cumsum, compared against softmax attention,
# then trained in a small sequence regressor.
import math

import torch
from torch import nn
import torch.nn.functional as F


def softmax_kernel(x, proj, eps=1e-6):
    # x: (b, h, n, d), proj: (m, d)
    d = x.shape[-1]
    x = x * d ** -0.25
    xw = torch.einsum("bhnd,md->bhnm", x, proj)
    sq = (x ** 2).sum(dim=-1, keepdim=True) / 2
    return torch.exp(xw - sq - xw.amax(dim=-1, keepdim=True).detach()) / math.sqrt(proj.shape[0]) + eps


def linear_attention(q, k, v):
    kv = torch.einsum("bhnm,bhnd->bhmd", k, v)
    z = 1.0 / torch.einsum("bhnm,bhm->bhn", q, k.sum(dim=2))
    return torch.einsum("bhnm,bhmd,bhn->bhnd", q, kv, z)


def causal_linear_attention(q, k, v):
    kv = torch.einsum("bhnm,bhnd->bhnmd", k, v).cumsum(dim=2)
    ksum = k.cumsum(dim=2)
    num = torch.einsum("bhnm,bhnmd->bhnd", q, kv)
    den = torch.einsum("bhnm,bhnm->bhn", q, ksum).unsqueeze(-1)
    return num / den


class PerformerBlock(nn.Module):
    def __init__(self, dim=16, heads=2, features=32, causal=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.register_buffer("proj", torch.randn(features, dim // heads))

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (t.view(b, n, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        qf, kf = softmax_kernel(q, self.proj), softmax_kernel(k, self.proj)
        att = causal_linear_attention(qf, kf, v) if self.causal else linear_attention(qf, kf, v)
        return x + self.out(att.transpose(1, 2).reshape(b, n, -1))


torch.manual_seed(0)
q, k, v = torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8), torch.randn(1, 2, 6, 8)
proj = torch.randn(256, 8)
exact = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), dim=-1) @ v
approx = linear_attention(softmax_kernel(q, proj), softmax_kernel(k, proj), v)
print(f"approximation error {(approx - exact).abs().mean().item():.4f} (exact mean |x| {exact.abs().mean().item():.4f})")
causal = causal_linear_attention(softmax_kernel(q, proj), softmax_kernel(k, proj), v)
print("first position attends to itself only:", torch.allclose(causal[:, :, 0], v[:, :, 0], atol=1e-5))

model = nn.Sequential(PerformerBlock(causal=True), PerformerBlock(), nn.Linear(16, 1))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
x = torch.randn(8, 10, 16)
target = x[..., :4].cumsum(dim=1).mean(dim=-1, keepdim=True)
for step in range(30):
    loss = F.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.5f}")
print("buffers:", [name for name, _ in model.named_buffers()])
