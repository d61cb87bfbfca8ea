# Everyday tensor habits: f-strings with format specs, item/tolist, in, iteration and unpacking, len, sorting
# with Python builtins, in-place updates through views, boolean masks, and numpy interop.
import numpy as np
import torch

x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
print(f"{x.sum():.2f} {x.mean():8.3f} {x.max():.0f} {x.argmax():d} {x.shape} {x.dtype} {x.numel()}")
a, b, c = x
print(a, b.tolist(), c[-1].item(), len(x), 5.0 in x, 99 in x)
for i, row in enumerate(x):
    row[i] = -1
print(x)
x.T[0] += 100
x[:, 1:3] *= 2
x[x < 0] = 0
print(x, x.diagonal())
v = x.view(-1)
v[::5] = 7
print(x)
s = x.sum()
s += 1
s /= 2
print(f"{s:.3f}", float(s), int(s), bool(s > 0), round(s.item(), 1))
arr = x.numpy()
print(type(arr).__name__, arr.dtype, np.asarray(x).shape, torch.from_numpy(arr * 2).sum().item())
print(sorted(torch.tensor([3, 1, 2])), max(torch.tensor([3, 1, 2])).item(), sum(torch.tensor([3.0, 1.0])).item())
print([f"{t:.1f}" for t in torch.linspace(0, 1, 3)], list(reversed(torch.arange(3))))
print(torch.tensor([[1, 2], [3, 4]]).T.contiguous().view(-1), x.new_zeros(2).tolist(), x.clone().fill_(1).sum())
