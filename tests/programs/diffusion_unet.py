# A tiny denoising-diffusion U-Net on 8x8 images: sinusoidal time embeddings through an MLP added to each
# residual block, GroupNorm + SiLU, strided-convolution downsampling, nearest upsampling with skip
# concatenation, the epsilon-prediction loss, and a few DDIM-style deterministic sampling steps.
import math

import torch
from torch import nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, c_in, c_out, t_dim):
        super().__init__()
        self.norm1 = nn.GroupNorm(4, c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, padding=1)
        self.time = nn.Linear(t_dim, c_out)
        self.norm2 = nn.GroupNorm(4, c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        self.skip = nn.Conv2d(c_in, c_out, 1) if c_in != c_out else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.time(temb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.skip(x)


class TinyUNet(nn.Module):
    def __init__(self, ch=8, t_dim=16):
        super().__init__()
        self.t_dim = t_dim
        self.time_mlp = nn.Sequential(nn.Linear(t_dim, t_dim * 2), nn.SiLU(), nn.Linear(t_dim * 2, t_dim))
        self.inc = nn.Conv2d(1, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, t_dim)
        self.pool = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.mid = ResBlock(ch, 2 * ch, t_dim)
        self.up1 = ResBlock(3 * ch, ch, t_dim)
        self.outc = nn.Sequential(nn.GroupNorm(4, ch), nn.SiLU(), nn.Conv2d(ch, 1, 3, padding=1))

    def forward(self, x, t):
        temb = self.time_mlp(timestep_embedding(t, self.t_dim))
        h0 = self.down1(self.inc(x), temb)
        h1 = self.mid(self.pool(h0), temb)
        up = F.interpolate(h1, scale_factor=2, mode="nearest")
        return self.outc(self.up1(torch.cat([up, h0], dim=1), temb))


T = 50
betas = torch.linspace(1e-4, 0.05, T)
alphas_bar = torch.cumprod(1 - betas, dim=0)

torch.manual_seed(0)
yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
centers = torch.rand(16, 2) * 4 + 2
images = torch.exp(-((xx - centers[:, 0, None, None]) ** 2 + (yy - centers[:, 1, None, None]) ** 2) / 4)
images = (images * 2 - 1).unsqueeze(1)

model = TinyUNet()
print(f"parameters: {sum(p.numel() for p in model.parameters() if p.requires_grad)}")
opt = torch.optim.Adam(model.parameters(), lr=2e-3)
for step in range(25):
    t = torch.randint(0, T, (images.size(0),))
    noise = torch.randn_like(images)
    ab = alphas_bar[t].view(-1, 1, 1, 1)
    noisy = ab.sqrt() * images + (1 - ab).sqrt() * noise
    loss = F.mse_loss(model(noisy, t), noise)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    if step % 8 == 0 or step == 24:
        print(f"step {step:2d} loss {loss.item():.4f}")

model.eval()
with torch.no_grad():
    x = torch.randn(2, 1, 8, 8)
    steps = list(range(T - 1, -1, -10))
    for i, t in enumerate(steps):
        tt = torch.full((2,), t, dtype=torch.long)
        eps = model(x, tt)
        x0 = (x - (1 - alphas_bar[t]).sqrt() * eps) / alphas_bar[t].sqrt()
        prev = alphas_bar[steps[i + 1]] if i + 1 < len(steps) else torch.tensor(1.0)
        x = prev.sqrt() * x0.clamp(-1, 1) + (1 - prev).sqrt() * eps
    print(f"sample mean {x.mean().item():.4f} std {x.std().item():.4f} range [{x.min().item():.3f}, {x.max().item():.3f}]")
