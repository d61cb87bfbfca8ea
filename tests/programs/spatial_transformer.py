# A spatial transformer network on toy digits: a localisation net predicts an affine transform,
# F.affine_grid + F.grid_sample warp the input, and a small classifier trains on the warped image.
import torch
import torch.nn as nn
import torch.nn.functional as F


class STN(nn.Module):
    def __init__(self):
        super().__init__()
        self.loc = nn.Sequential(nn.Conv2d(1, 4, 5), nn.MaxPool2d(2), nn.ReLU(True), nn.Flatten(), nn.Linear(4 * 6 * 6, 6))
        self.loc[-1].weight.data.zero_()
        self.loc[-1].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))
        self.cls = nn.Sequential(nn.Flatten(), nn.Linear(16 * 16, 32), nn.ReLU(), nn.Linear(32, 3))

    def stn(self, x):
        theta = self.loc(x).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        return self.cls(self.stn(x))


torch.manual_seed(0)
x = torch.randn(8, 1, 16, 16)
y = torch.randint(0, 3, (8,))
model = STN()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(6):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
theta = torch.tensor([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.1]]])
img = torch.arange(30.0).reshape(1, 1, 5, 6)
for mode in ["bilinear", "nearest", "bicubic"]:
    for pad in ["zeros", "border", "reflection"]:
        for ac in [True, False]:
            g = F.affine_grid(theta, (1, 1, 4, 5), align_corners=ac)
            out = F.grid_sample(img, g, mode=mode, padding_mode=pad, align_corners=ac)
            print(mode, pad, ac, [round(v, 3) for v in out.flatten().tolist()[:6]], round(out.sum().item(), 3))
t3 = torch.tensor([[[1.0, 0.1, 0, 0.2], [0, 0.9, 0.1, 0], [0.1, 0, 1.1, -0.1]]])
g3 = F.affine_grid(t3, (1, 2, 3, 4, 5), align_corners=False)
print(g3.shape, round(g3.sum().item(), 4))
vol = torch.randn(1, 2, 4, 5, 6)
print(round(F.grid_sample(vol, g3, align_corners=False).sum().item(), 4))
