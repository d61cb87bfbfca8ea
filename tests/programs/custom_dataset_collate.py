# A map-style Dataset returning dicts, the default collate (dicts of tensors, numbers, numpy arrays, strings),
# random_split with a seeded generator, Subset, ConcatDataset and a BatchSampler over a SequentialSampler.
import numpy as np
import torch
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, SequentialSampler, Subset,
                              TensorDataset)


class Points(Dataset):
    def __init__(self, n, offset):
        self.x = np.arange(n * 2, dtype=np.float32).reshape(n, 2) + offset
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.from_numpy(self.x[i]), "label": i % 3, "weight": 0.5 * i, "raw": self.x[i] * 2,
                "name": f"p{i}"}


ds = ConcatDataset([Points(5, 0.0), Points(4, 100.0)])
print(len(ds), ds[6]["name"], ds[6]["x"])
for batch in DataLoader(ds, batch_size=4):
    print(sorted(batch), batch["x"].shape, batch["label"], batch["weight"].dtype, batch["raw"].dtype, batch["name"])
sub = Subset(ds, [0, 8, 3])
print([item["name"] for item in sub])
loader = DataLoader(ds, batch_sampler=BatchSampler(SequentialSampler(ds), batch_size=4, drop_last=True))
print(len(loader), [b["label"].tolist() for b in loader])
td = TensorDataset(torch.arange(10.0).view(5, 2), torch.arange(5))
for xb, yb in DataLoader(td, batch_size=2, drop_last=False):
    print(xb.sum().item(), yb.tolist())
pairs = DataLoader([(np.float64(i), [i, i + 1]) for i in range(4)], batch_size=2)
for a, b in pairs:
    print(a.dtype, a.tolist(), [t.tolist() for t in b])
