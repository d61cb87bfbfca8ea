# A Kaggle notebook turned script: numpy feature engineering, standardization, torch.tensor(X, dtype=...),
# a weighted BCEWithLogits for imbalance, OneCycleLR per batch, and thresholded metrics.
import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

rng = np.random.RandomState(42)
X = rng.randn(64, 5)
X[:, 3] = np.log1p(np.abs(X[:, 3]))
y = ((X[:, 0] + 0.5 * X[:, 1] ** 2) > 1.0).astype(np.float32)
mean, std = X[:48].mean(0), X[:48].std(0)
X = (X - mean) / std
X_train = torch.tensor(X[:48], dtype=torch.float32)
y_train = torch.tensor(y[:48]).unsqueeze(1)
X_val, y_val = torch.tensor(X[48:], dtype=torch.float32), torch.tensor(y[48:]).unsqueeze(1)
pos_weight = torch.tensor([(y[:48] == 0).sum() / max(1, (y[:48] == 1).sum())])
print("pos_weight", round(pos_weight.item(), 3))
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.BatchNorm1d(16), nn.SiLU(), nn.Dropout(0.1), nn.Linear(16, 1))
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
loader = DataLoader(TensorDataset(X_train, y_train), batch_size=16, shuffle=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.05, epochs=3, steps_per_epoch=len(loader))
for epoch in range(3):
    model.train()
    for xb, yb in loader:
        optimizer.zero_grad()
        loss = criterion(model(xb), yb)
        loss.backward()
        optimizer.step()
        scheduler.step()
    model.eval()
    with torch.no_grad():
        probs = torch.sigmoid(model(X_val))
        preds = (probs > 0.5).float()
        tp = ((preds == 1) & (y_val == 1)).sum().item()
        acc = (preds == y_val).float().mean().item()
    print(f"epoch {epoch} loss {loss.item():.4f} val_acc {acc:.4f} tp {tp} lr {scheduler.get_last_lr()[0]:.5f}")
