# A small capsule network: primary capsules from a conv layer, the squash nonlinearity, dynamic routing
# by agreement (softmax over routing logits, iterative updates with detached predictions), a margin loss
# on capsule lengths, and a reconstruction decoder masked by the true class.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def squash(s, dim=-1, eps=1e-8):
    sq = (s ** 2).sum(dim=dim, keepdim=True)
    return sq / (1 + sq) * s / torch.sqrt(sq + eps)


class CapsNet(nn.Module):
    def __init__(self, n_classes=3, routing_iters=3):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, kernel_size=3)
        self.primary = nn.Conv2d(16, 4 * 8, kernel_size=3, stride=2)
        self.n_primary = 4 * 2 * 2
        self.W = nn.Parameter(0.1 * torch.randn(1, self.n_primary, n_classes, 12, 8))
        self.iters = routing_iters
        self.decoder = nn.Sequential(nn.Linear(12 * n_classes, 32), nn.ReLU(), nn.Linear(32, 64), nn.Sigmoid())

    def forward(self, x, y=None):
        h = F.relu(self.conv(x))
        p = self.primary(h)                                   # B, 32, 2, 2
        B = x.size(0)
        u = p.view(B, 4, 8, -1).permute(0, 1, 3, 2).reshape(B, self.n_primary, 8)
        u = squash(u)
        u_hat = (self.W @ u[:, :, None, :, None]).squeeze(-1)   # B, P, C, 12
        b = torch.zeros(B, self.n_primary, u_hat.size(2))
        for i in range(self.iters):
            c = F.softmax(b, dim=2)
            if i < self.iters - 1:
                v = squash((c.unsqueeze(-1) * u_hat.detach()).sum(dim=1))
                b = b + (u_hat.detach() * v.unsqueeze(1)).sum(-1)
            else:
                v = squash((c.unsqueeze(-1) * u_hat).sum(dim=1))
        lengths = v.norm(dim=-1)
        if y is None:
            y = lengths.argmax(dim=1)
        mask = F.one_hot(y, num_classes=v.size(1)).unsqueeze(-1)
        recon = self.decoder((v * mask).flatten(1))
        return lengths, recon


def margin_loss(lengths, y, m_pos=0.9, m_neg=0.1, lam=0.5):
    t = F.one_hot(y, lengths.size(1)).float()
    loss = t * F.relu(m_pos - lengths) ** 2 + lam * (1 - t) * F.relu(lengths - m_neg) ** 2
    return loss.sum(dim=1).mean()


# three classes of 8x8 images: horizontal bar, vertical bar, diagonal
imgs, ys = [], []
for k in range(48):
    img = torch.zeros(8, 8)
    cls = k % 3
    pos = k % 6 + 1
    if cls == 0:
        img[pos, :] = 1.0
    elif cls == 1:
        img[:, pos] = 1.0
    else:
        img += torch.eye(8)
    imgs.append(img + 0.05 * torch.randn(8, 8))
    ys.append(cls)
X = torch.stack(imgs).unsqueeze(1)
Y = torch.tensor(ys)

model = CapsNet()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
for epoch in range(25):
    lengths, recon = model(X, Y)
    loss = margin_loss(lengths, Y) + 0.0005 * F.mse_loss(recon, X.flatten(1), reduction="sum")
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 6 == 0:
        acc = (lengths.argmax(1) == Y).float().mean().item()
        print(f"epoch {epoch:2d} loss {loss.item():.4f} acc {acc:.3f}")
model.eval()
with torch.no_grad():
    lengths, _ = model(X)
print("capsule lengths first row", [round(v, 4) for v in lengths[0].tolist()])
print(f"final acc {(lengths.argmax(1) == Y).sum().item()}/{len(Y)}")
