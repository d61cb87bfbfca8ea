# PointNet on synthetic point clouds: a T-Net predicting a 3x3 alignment (identity added, applied with bmm),
# shared per-point MLPs as Conv1d with kernel 1, a symmetric max over points, the orthogonality regulariser
# ||I - A A^T||, and a check that the prediction is invariant to permuting the points.
import torch
import torch.nn as nn
import torch.nn.functional as F


class TNet(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.k = k
        self.conv = nn.Sequential(nn.Conv1d(k, 16, 1, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Conv1d(16, 32, 1), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, k * k))

    def forward(self, x):
        h = self.conv(x).max(dim=2).values
        eye = torch.eye(self.k, device=x.device).flatten()
        return (self.fc(h) + eye).view(-1, self.k, self.k)


class PointNet(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.tnet = TNet()
        self.mlp = nn.Sequential(nn.Conv1d(3, 16, 1, bias=False), nn.BatchNorm1d(16), nn.ReLU(), nn.Conv1d(16, 32, 1))
        self.head = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Dropout(0.0), nn.Linear(16, classes))

    def forward(self, pts):  # pts: (b, n, 3)
        x = pts.transpose(2, 1)
        trans = self.tnet(x)
        x = torch.bmm(trans, x)
        feat, arg = self.mlp(x).max(dim=2)
        return self.head(feat), trans, arg


def make_cloud(kind, n=32):
    if kind == 0:  # sphere
        p = torch.randn(n, 3)
        return p / p.norm(dim=1, keepdim=True)
    if kind == 1:  # cube surface
        p = torch.rand(n, 3) * 2 - 1
        face = torch.randint(0, 3, (n,))
        p[torch.arange(n), face] = torch.sign(p[torch.arange(n), face])
        return p
    t = torch.rand(n) * 6.28  # ring
    return torch.stack([t.cos(), t.sin(), 0.05 * torch.randn(n)], dim=1)


torch.manual_seed(0)
labels = torch.arange(24) % 3
clouds = torch.stack([make_cloud(int(c)) for c in labels])
model = PointNet()
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
for epoch in range(25):
    model.train()
    logits, trans, _ = model(clouds)
    eye = torch.eye(3).expand_as(trans)
    reg = torch.linalg.norm(eye - trans @ trans.transpose(1, 2), dim=(1, 2)).mean()
    loss = F.cross_entropy(logits, labels) + 0.001 * reg
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 5 == 4:
        print(f"epoch {epoch + 1}: loss {loss.item():.4f} reg {reg.item():.4f} "
              f"acc {(logits.argmax(1) == labels).float().mean().item():.3f}")
model.eval()
with torch.no_grad():
    perm = torch.randperm(32)
    a, _, arg = model(clouds[:4])
    b, _, _ = model(clouds[:4, perm])
    print(f"permutation invariant: {torch.allclose(a, b, atol=1e-5)}; critical points of cloud 0: "
          f"{torch.unique(arg[0]).numel()}")
    print(a.softmax(-1))
