# Quantile regression with conformal calibration: one network predicting three quantiles, the pinball loss
# written with torch.maximum, a monotonicity penalty from torch.diff, a TensorDataset split by random_split with
# a seeded generator, torch.quantile(interpolation="higher") on calibration scores (conformalized quantile
# regression), interval coverage and width, and the worst residuals found with topk and sort.
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(1)
x = torch.rand(400, 1) * 2 * math.pi
y = torch.sin(x) + (0.1 + 0.2 * x / math.pi) * torch.randn(400, 1)
train_ds, cal_ds, test_ds = random_split(TensorDataset(x, y), [240, 80, 80], generator=torch.Generator().manual_seed(0))
print("split sizes", len(train_ds), len(cal_ds), len(test_ds))
quantiles = torch.tensor([0.1, 0.5, 0.9])


def pinball(pred, target, q):
    err = target - pred
    return torch.maximum(q * err, (q - 1) * err).mean()


model = nn.Sequential(nn.Linear(1, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
loader = DataLoader(train_ds, batch_size=32, shuffle=True, generator=torch.Generator().manual_seed(0))
for epoch in range(40):
    total = 0.0
    for xb, yb in loader:
        pred = model(xb)
        loss = pinball(pred, yb, quantiles)
        loss = loss + 0.1 * torch.relu(-torch.diff(pred, dim=1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * xb.size(0)
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1} pinball {total / len(train_ds):.4f}")


def stack(ds):
    xs, ys = zip(*[ds[i] for i in range(len(ds))])
    return torch.stack(xs), torch.stack(ys)


model.eval()
with torch.no_grad():
    xc, yc = stack(cal_ds)
    pc = model(xc)
    scores = torch.max(pc[:, :1] - yc, yc - pc[:, 2:]).squeeze(1)
    alpha = 0.2
    level = math.ceil((len(scores) + 1) * (1 - alpha)) / len(scores)
    qhat = torch.quantile(scores, level, interpolation="higher")
    print(f"conformal correction {qhat.item():.4f} (level {level:.4f})")
    xt, yt = stack(test_ds)
    pt = model(xt)
    lo, hi = pt[:, 0:1] - qhat, pt[:, 2:3] + qhat
    raw = ((yt >= pt[:, 0:1]) & (yt <= pt[:, 2:3])).float().mean()
    cov = ((yt >= lo) & (yt <= hi)).float().mean()
    print(f"raw coverage {raw.item():.3f} conformal coverage {cov.item():.3f} width {(hi - lo).mean():.4f}")
    resid = (yt - pt[:, 1:2]).abs().squeeze(1)
    worst = resid.topk(3)
    print("worst residuals", [f"{v:.4f}" for v in worst.values.tolist()], "at x", [f"{xt[i, 0]:.3f}" for i in worst.indices])
    s, order = torch.sort(xt.squeeze(1))
    print("median curve", [round(v, 3) for v in pt[order[::20], 1].tolist()])
    crossings = (torch.diff(pt, dim=1) < 0).sum().item()
    print(f"quantile crossings {crossings}")
