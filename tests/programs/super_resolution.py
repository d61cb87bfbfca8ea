# Single-image super-resolution (the ESPCN example): low-resolution inputs made with
# F.interpolate(mode="bicubic", antialias=True), a sub-pixel convolution network with nn.PixelShuffle,
# a bicubic-upsampling baseline, PSNR from MSE with torch.log10, and PixelUnshuffle as the inverse.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ESPCN(nn.Module):
    def __init__(self, upscale=2):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, padding=2)
        self.conv2 = nn.Conv2d(16, 8, 3, padding=1)
        self.conv3 = nn.Conv2d(8, upscale ** 2, 3, padding=1)
        self.shuffle = nn.PixelShuffle(upscale)

    def forward(self, x):
        x = torch.tanh(self.conv1(x))
        x = torch.tanh(self.conv2(x))
        return torch.sigmoid(self.shuffle(self.conv3(x)))


def psnr(a, b):
    mse = F.mse_loss(a, b)
    return 10 * torch.log10(1.0 / mse)


torch.manual_seed(0)
yy, xx = torch.meshgrid(torch.linspace(0, 1, 16), torch.linspace(0, 1, 16), indexing="ij")
freqs = torch.rand(8, 2) * 6 + 1
hr = 0.5 + 0.5 * torch.sin(freqs[:, 0, None, None] * xx + freqs[:, 1, None, None] * yy).unsqueeze(1)
lr = F.interpolate(hr, scale_factor=0.5, mode="bicubic", antialias=True, align_corners=False).clamp(0, 1)
print("lr", tuple(lr.shape), f"{lr.mean().item():.5f}")
down_aa = F.interpolate(hr, size=(6, 6), mode="bilinear", antialias=True)
print("antialiased bilinear to 6x6", f"{down_aa.std().item():.5f}")

baseline = F.interpolate(lr, scale_factor=2, mode="bicubic", align_corners=False).clamp(0, 1)
print(f"bicubic baseline PSNR {psnr(baseline, hr).item():.3f} dB")

model = ESPCN()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(30):
    sr = model(lr)
    loss = F.mse_loss(sr, hr)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch:2d} loss {loss.item():.5f} PSNR {psnr(sr.detach(), hr).item():.3f}")

with torch.no_grad():
    sr = model(lr)
    print("sr", tuple(sr.shape), f"PSNR {psnr(sr, hr).item():.3f}")
    packed = nn.PixelUnshuffle(2)(sr)
    print("unshuffle", tuple(packed.shape), torch.equal(nn.PixelShuffle(2)(packed), sr))
    nearest = F.interpolate(lr, scale_factor=2, mode="nearest-exact")
    print(f"nearest-exact PSNR {psnr(nearest, hr).item():.3f}")
