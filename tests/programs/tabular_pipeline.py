# A tabular pipeline: standardisation with mean/std(keepdim), random_split with a seeded generator,
# DataLoader with drop_last, WeightedRandomSampler-free class weights, BCEWithLogitsLoss(pos_weight),
# ReduceLROnPlateau, early stopping with a best state_dict copied by deepcopy, and metrics with
# torch.no_grad and sigmoid thresholds.
import copy

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

X = torch.randn(120, 5)
w_true = torch.tensor([1.5, -2.0, 0.0, 0.7, 0.3])
y = ((X @ w_true + 0.3 * torch.randn(120)) > 0.5).float()
print("positives", int(y.sum().item()), "of", len(y))

mean, std = X.mean(dim=0, keepdim=True), X.std(dim=0, keepdim=True)
Xn = (X - mean) / std
ds = TensorDataset(Xn, y)
train_ds, val_ds = random_split(ds, [90, 30], generator=torch.Generator().manual_seed(42))
print(len(train_ds), len(val_ds))
train_dl = DataLoader(train_ds, batch_size=16, shuffle=True, drop_last=True)
val_dl = DataLoader(val_ds, batch_size=64)

model = nn.Sequential(nn.Linear(5, 16), nn.SiLU(), nn.Dropout(0.1), nn.Linear(16, 1))
pos_weight = (len(y) - y.sum()) / y.sum()
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)

best, best_state, bad_epochs = float("inf"), None, 0
for epoch in range(8):
    model.train()
    running = 0.0
    for xb, yb in train_dl:
        opt.zero_grad()
        loss = criterion(model(xb).squeeze(1), yb)
        loss.backward()
        opt.step()
        running += loss.item() * xb.size(0)
    model.eval()
    with torch.no_grad():
        val_loss = sum(criterion(model(xb).squeeze(1), yb).item() * len(xb) for xb, yb in val_dl) / len(val_ds)
    sched.step(val_loss)
    print(f"epoch {epoch}: train {running / (len(train_dl) * 16):.4f} val {val_loss:.4f} lr {opt.param_groups[0]['lr']:.4g}")
    if val_loss < best - 1e-4:
        best, best_state, bad_epochs = val_loss, copy.deepcopy(model.state_dict()), 0
    else:
        bad_epochs += 1
        if bad_epochs >= 3:
            print("early stop")
            break

model.load_state_dict(best_state)
with torch.no_grad():
    probs = torch.sigmoid(model(Xn)).squeeze(-1)
pred = (probs > 0.5).long()
tp = ((pred == 1) & (y == 1)).sum().item()
fp = ((pred == 1) & (y == 0)).sum().item()
fn = ((pred == 0) & (y == 1)).sum().item()
print(f"precision {tp / max(tp + fp, 1):.3f} recall {tp / max(tp + fn, 1):.3f} best val {best:.4f}")
