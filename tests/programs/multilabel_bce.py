# Multi-label classification: targets as multi-hot float vectors, BCEWithLogitsLoss with pos_weight computed
# from label frequencies, sigmoid probabilities and a 0.5 threshold, per-class precision/recall/F1 with
# logical ops and torch.where for empty classes, exact-match ratio, and a ReduceLROnPlateau on the val loss.
import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(120, 10)
W_true = torch.randn(10, 4)
Y = (X @ W_true + torch.tensor([0.0, -1.0, -2.0, 0.5]) > 0).float()
train_x, val_x = X[:90], X[90:]
train_y, val_y = Y[:90], Y[90:]

pos = train_y.sum(0)
pos_weight = (train_y.shape[0] - pos) / pos.clamp(min=1)
print("label frequency", (pos / train_y.shape[0]).numpy().round(3))
print("pos_weight", pos_weight.numpy().round(3))

model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.Linear(32, 4))
criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=1)

for epoch in range(10):
    model.train()
    for i in range(0, 90, 30):
        optimizer.zero_grad()
        loss = criterion(model(train_x[i:i + 30]), train_y[i:i + 30])
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val_loss = criterion(model(val_x), val_y).item()
    scheduler.step(val_loss)
    if epoch % 3 == 0:
        print(f"epoch {epoch} train {loss.item():.4f} val {val_loss:.4f} lr {optimizer.param_groups[0]['lr']:.5f}")

with torch.no_grad():
    probs = torch.sigmoid(model(val_x))
    preds = (probs > 0.5).float()
    tp = (preds * val_y).sum(0)
    fp = (preds * (1 - val_y)).sum(0)
    fn = ((1 - preds) * val_y).sum(0)
    precision = torch.where(tp + fp > 0, tp / (tp + fp), torch.zeros_like(tp))
    recall = torch.where(tp + fn > 0, tp / (tp + fn), torch.zeros_like(tp))
    f1 = torch.where(precision + recall > 0, 2 * precision * recall / (precision + recall), torch.zeros_like(tp))
    print("precision", precision.numpy().round(3))
    print("recall", recall.numpy().round(3))
    print(f"macro F1 {f1.mean().item():.4f}")
    exact = torch.all(preds == val_y, dim=1).float().mean()
    print(f"exact match {exact.item():.4f} hamming {(preds != val_y).float().mean().item():.4f}")
    print("any label predicted", torch.any(preds.bool(), dim=1).sum().item(), "of", len(preds))
