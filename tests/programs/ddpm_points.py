# A tiny DDPM on 2-D points: a linear beta schedule with cumprod, sinusoidal time embeddings,
# q_sample via gather, an MLP noise predictor, and ancestral sampling under torch.no_grad().
import math
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
T = 50
betas = torch.linspace(1e-4, 0.02, T)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)
sqrt_ac = alphas_cumprod.sqrt()
sqrt_1mac = (1 - alphas_cumprod).sqrt()


def extract(a, t, shape):
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(shape) - 1)))


def timestep_embedding(t, dim=16):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.t_mlp = nn.Sequential(nn.Linear(16, 32), nn.SiLU(), nn.Linear(32, 32))
        self.net = nn.Sequential(nn.Linear(2 + 32, 64), nn.SiLU(), nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 2))

    def forward(self, x, t):
        h = self.t_mlp(timestep_embedding(t))
        return self.net(torch.cat([x, h], dim=1))


theta = torch.rand(256) * 2 * math.pi
data = torch.stack([theta.cos(), theta.sin()], dim=1) + 0.05 * torch.randn(256, 2)
model = Denoiser()
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(60):
    idx = torch.randint(0, 256, (64,))
    x0 = data[idx]
    t = torch.randint(0, T, (64,))
    noise = torch.randn_like(x0)
    xt = extract(sqrt_ac, t, x0.shape) * x0 + extract(sqrt_1mac, t, x0.shape) * noise
    loss = F.mse_loss(model(xt, t), noise)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 20 == 0:
        print(f"step {step:3d} loss {loss.item():.4f}")

with torch.no_grad():
    x = torch.randn(8, 2)
    for i in reversed(range(T)):
        t = torch.full((8,), i, dtype=torch.long)
        eps = model(x, t)
        coef = betas[i] / sqrt_1mac[i]
        mean = (x - coef * eps) / alphas[i].sqrt()
        if i > 0:
            x = mean + betas[i].sqrt() * torch.randn_like(x)
        else:
            x = mean
print("samples", x.shape, x.dtype)
print("radius mean", x.norm(dim=1).mean().item())
