# A tiny PixelCNN on 8x8 binary images: masked convolutions (type A for the first layer, type B after) as an
# nn.Conv2d subclass with a registered mask buffer applied in forward through F.conv2d, BCEWithLogitsLoss over
# pixels, bits-per-dimension, a check that the receptive field never sees the current or later pixels
# (gradient of one output w.r.t. the input), and autoregressive sampling pixel by pixel with torch.bernoulli.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_images(n):
    # vertical and horizontal bars
    imgs = torch.zeros(n, 1, 8, 8)
    pos = torch.randint(1, 7, (n,))
    horiz = torch.rand(n) < 0.5
    for i in range(n):
        if horiz[i]:
            imgs[i, 0, pos[i], :] = 1.0
        else:
            imgs[i, 0, :, pos[i]] = 1.0
    return imgs


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        kh, kw = self.kernel_size
        mask = torch.ones_like(self.weight)
        mask[:, :, kh // 2, kw // 2 + (mask_type == "B"):] = 0
        mask[:, :, kh // 2 + 1:] = 0
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, self.stride, self.padding)


model = nn.Sequential(
    MaskedConv2d("A", 1, 16, 5, padding=2), nn.ReLU(),
    MaskedConv2d("B", 16, 16, 3, padding=1), nn.ReLU(),
    MaskedConv2d("B", 16, 16, 3, padding=1), nn.ReLU(),
    nn.Conv2d(16, 1, 1),
)
print("buffers", [name for name, _ in model.named_buffers()])
crit = nn.BCEWithLogitsLoss()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for step in range(45):
    x = make_images(32)
    loss = crit(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 14:
        print(f"step {step + 1} loss {loss.item():.4f} bits/dim {loss.item() / math.log(2):.4f}")

x = make_images(1).requires_grad_(True)
out = model(x)
out[0, 0, 4, 4].backward()
g = x.grad[0, 0].abs() > 0
print("sees current pixel:", bool(g[4, 4]), "sees later pixels:", bool(g[4, 5:].any() or g[5:].any()),
      "sees earlier pixels:", int(g[:4].sum() + g[4, :4].sum()))

model.eval()
with torch.no_grad():
    samples = torch.zeros(4, 1, 8, 8)
    for i in range(8):
        for j in range(8):
            probs = torch.sigmoid(model(samples)[:, :, i, j])
            samples[:, :, i, j] = torch.bernoulli(probs)
    rows_full = (samples.sum(dim=3) == 8).any(dim=2).squeeze(1)
    cols_full = (samples.sum(dim=2) == 8).any(dim=2).squeeze(1)
    print(f"sample pixel means {[round(v, 3) for v in samples.mean(dim=(1, 2, 3)).tolist()]}")
    print(f"samples with a full row {rows_full.tolist()} or a full column {cols_full.tolist()}")
    test = make_images(64)
    print(f"test nll {crit(model(test), test).item():.4f}")
