# Data loading beyond map-style datasets: an IterableDataset streaming generated records (get_worker_info()
# is None in the main process), DataLoader with batch_size and a custom collate_fn that pads and builds masks,
# TensorDataset + SequentialSampler + BatchSampler, batch_size=None, and a training loop over both.
import torch
import torch.nn as nn
from torch.utils.data import BatchSampler, DataLoader, IterableDataset, SequentialSampler, TensorDataset, get_worker_info


class RecordStream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        start, step = (0, 1) if info is None else (info.id, info.num_workers)
        for i in range(start, self.n, step):
            length = 2 + i % 5
            feats = torch.arange(length, dtype=torch.float32) * 0.1 + i * 0.01
            yield {"feats": feats, "label": i % 2, "id": f"rec{i}"}


def pad_collate(batch):
    lengths = torch.tensor([len(b["feats"]) for b in batch])
    padded = torch.zeros(len(batch), int(lengths.max()))
    for row, b in enumerate(batch):
        padded[row, : len(b["feats"])] = b["feats"]
    mask = torch.arange(padded.shape[1])[None, :] < lengths[:, None]
    return padded, mask, torch.tensor([b["label"] for b in batch]), [b["id"] for b in batch]


torch.manual_seed(0)
loader = DataLoader(RecordStream(20), batch_size=6, collate_fn=pad_collate)
padded, mask, labels, ids = next(iter(loader))
print(padded.shape, mask.sum(1).tolist(), labels.tolist(), ids[:3])
print("batches:", sum(1 for _ in loader))

model = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.2)
for epoch in range(3):
    total, seen = 0.0, 0
    for padded, mask, labels, _ in loader:
        m = mask.float()
        mean = (padded * m).sum(1) / m.sum(1)
        last = padded.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        loss = nn.functional.cross_entropy(model(torch.stack([mean, last], 1)), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * len(labels)
        seen += len(labels)
    print(f"epoch {epoch} mean loss {total / seen:.5f} over {seen}")

ds = TensorDataset(torch.randn(10, 3), torch.arange(10))
sampler = BatchSampler(SequentialSampler(ds), batch_size=4, drop_last=False)
print("batch sampler:", list(sampler))
for xb, yb in DataLoader(ds, sampler=sampler, batch_size=None):
    print(xb.shape, yb.tolist())
    break
single = DataLoader(ds, batch_size=None)
x0, y0 = next(iter(single))
print("unbatched:", x0.shape, y0.item(), len(single))
