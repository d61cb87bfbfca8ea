# Reproducible data handling with torch.Generator objects: a generator per purpose (split, shuffle,
# augmentation), get_state/set_state to replay a stream, random_split with fractions, a DataLoader whose
# shuffle order is fixed by its generator, Subset indices, and a k-fold loop with torch.randperm(generator=).
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Subset, TensorDataset, random_split

torch.manual_seed(0)
X = torch.randn(60, 4)
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).long()
ds = TensorDataset(X, y)

split_gen = torch.Generator().manual_seed(42)
print(f"generator initial_seed {split_gen.initial_seed()}")
train_ds, val_ds, test_ds = random_split(ds, [0.6, 0.2, 0.2], generator=split_gen)
print(f"split sizes {len(train_ds)} {len(val_ds)} {len(test_ds)}; disjoint: "
      f"{len(set(train_ds.indices) | set(val_ds.indices) | set(test_ds.indices)) == 60}")

aug_gen = torch.Generator()
aug_gen.manual_seed(7)
state = aug_gen.get_state()
noise_a = torch.randn(3, generator=aug_gen)
aug_gen.set_state(state)
noise_b = torch.randn(3, generator=aug_gen)
print(f"state replay identical: {torch.equal(noise_a, noise_b)}, state dtype {state.dtype}")


def train_eval(train_subset, eval_subset, epochs=10):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
    loader = DataLoader(train_subset, batch_size=12, shuffle=True, generator=torch.Generator().manual_seed(3))
    opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9, nesterov=True)
    for epoch in range(epochs):
        for xb, yb in loader:
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
    model.eval()
    correct = 0
    with torch.no_grad():
        for xb, yb in DataLoader(eval_subset, batch_size=32):
            correct += (model(xb).argmax(1) == yb).sum().item()
    return loss.item(), correct / len(eval_subset)


loss, acc = train_eval(train_ds, val_ds)
print(f"holdout: last loss {loss:.4f} val acc {acc:.3f}")

k = 4
fold_gen = torch.Generator().manual_seed(123)
perm = torch.randperm(len(ds), generator=fold_gen)
folds = perm.chunk(k)
accs = []
for i in range(k):
    val_idx = folds[i].tolist()
    train_idx = torch.cat([f for j, f in enumerate(folds) if j != i]).tolist()
    loss, acc = train_eval(Subset(ds, train_idx), Subset(ds, val_idx), epochs=6)
    accs.append(acc)
    print(f"fold {i}: train {len(train_idx)} val {len(val_idx)} loss {loss:.4f} acc {acc:.3f}")
print(f"cv accuracy {sum(accs) / k:.3f} +- {torch.tensor(accs).std().item():.3f}")
