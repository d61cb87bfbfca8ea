# Entity embeddings for a tabular model: one nn.Embedding per categorical column (sized by the usual
# min(50, (n + 1) // 2) rule) in an nn.ModuleList, continuous columns through BatchNorm1d, a TensorDataset split
# with torch.utils.data.random_split, DataLoaders, AdamW with a StepLR, and per-class accuracy.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)
n = 160
cardinalities = [5, 3, 7]
cats = torch.stack([torch.randint(0, c, (n,)) for c in cardinalities], dim=1)
conts = torch.randn(n, 2)
score = (cats[:, 0] % 2).float() * 1.5 + (cats[:, 2] > 3).float() - conts[:, 0] * 0.8
labels = (score > score.median()).long()


class TabularModel(nn.Module):
    def __init__(self, cardinalities, n_cont, hidden=16, n_classes=2):
        super().__init__()
        sizes = [(c, min(50, (c + 1) // 2)) for c in cardinalities]
        self.embeds = nn.ModuleList([nn.Embedding(c, d) for c, d in sizes])
        self.emb_drop = nn.Dropout(0.0)
        self.bn_cont = nn.BatchNorm1d(n_cont)
        n_emb = sum(d for _, d in sizes)
        self.layers = nn.Sequential(
            nn.Linear(n_emb + n_cont, hidden), nn.ReLU(), nn.BatchNorm1d(hidden), nn.Linear(hidden, n_classes))

    def forward(self, x_cat, x_cont):
        x = torch.cat([e(x_cat[:, i]) for i, e in enumerate(self.embeds)], dim=1)
        x = self.emb_drop(x)
        x = torch.cat([x, self.bn_cont(x_cont)], dim=1)
        return self.layers(x)


dataset = TensorDataset(cats, conts, labels)
train_set, valid_set = random_split(dataset, [120, 40])
print(f"train {len(train_set)} valid {len(valid_set)}; first indices {train_set.indices[:5]}")
train_dl = DataLoader(train_set, batch_size=32, shuffle=True, drop_last=True)
valid_dl = DataLoader(valid_set, batch_size=64)

model = TabularModel(cardinalities, 2)
print([tuple(e.weight.shape) for e in model.embeds])
opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=1e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(6):
    model.train()
    total = 0.0
    for xc, xn, y in train_dl:
        opt.zero_grad()
        loss = loss_fn(model(xc, xn), y)
        loss.backward()
        opt.step()
        total += loss.item() * y.size(0)
    sched.step()
    model.eval()
    correct = torch.zeros(2)
    seen = torch.zeros(2)
    with torch.no_grad():
        for xc, xn, y in valid_dl:
            pred = model(xc, xn).argmax(1)
            correct += torch.bincount(y[pred == y], minlength=2).float()
            seen += torch.bincount(y, minlength=2).float()
    per_class = (correct / seen).tolist()
    print(f"epoch {epoch}: lr {sched.get_last_lr()[0]:.4f} train loss {total / 96:.4f} "
          f"per-class acc {per_class[0]:.3f}/{per_class[1]:.3f}")
