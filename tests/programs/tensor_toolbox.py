# Everyday tensor utilities a script reaches for: einsum, stack/unbind, F.pad, cumsum/cumprod, bucketize,
# histc, quantile, unique(return_counts), sort/argsort, bincount, nan_to_num, clamp, where, meshgrid,
# tril_indices, allclose, tolist/item in f-strings, and saving/loading through io.BytesIO.
import io

import torch
import torch.nn.functional as F

torch.manual_seed(0)
a = torch.randn(3, 4)
b = torch.randn(4, 5)
print("einsum", torch.allclose(torch.einsum("ij,jk->ik", a, b), a @ b, atol=1e-6))
print("batched einsum", torch.einsum("bij,bjk->bik", a.unsqueeze(0).repeat(2, 1, 1), b.expand(2, 4, 5)).shape)
rows = torch.unbind(a, dim=0)
print(len(rows), torch.stack(rows, dim=1).shape)
print("pad", F.pad(a, (1, 2, 0, 1), value=-1.0).shape, F.pad(a.unsqueeze(0), (2, 2), mode="reflect").shape)
x = torch.tensor([0.5, 1.5, 2.5, 3.5, 4.5])
print("cumsum", x.cumsum(0).tolist(), "cumprod", x.cumprod(dim=0)[-1].item())
boundaries = torch.tensor([1.0, 2.0, 4.0])
print("bucketize", torch.bucketize(x, boundaries).tolist(), torch.bucketize(x, boundaries, right=True).tolist())
print("histc", torch.histc(x, bins=4, min=0, max=5).tolist())
print("quantile", torch.quantile(x, torch.tensor([0.25, 0.5, 0.75])).tolist())
v = torch.tensor([3, 1, 2, 3, 3, 1])
u, counts = torch.unique(v, return_counts=True)
print("unique", u.tolist(), counts.tolist(), "bincount", torch.bincount(v).tolist())
vals, idx = torch.sort(a[0], descending=True)
print("sorted", [round(t, 4) for t in vals.tolist()], idx.tolist(), a[0].argsort().tolist())
bad = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
print("nan_to_num", torch.nan_to_num(bad, nan=0.0, posinf=9.0, neginf=-9.0).tolist())
print("clamp", a.clamp(min=-0.5, max=0.5).abs().max().item() <= 0.5)
print("where", torch.where(a > 0, a, torch.zeros_like(a)).sum().item())
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print("meshgrid", gx.shape, gy.tolist())
ti = torch.tril_indices(3, 3)
print("tril_indices", ti.tolist())
total = torch.tensor(0.0)
for i in range(5):
    total += a[:, i % 4].sum()
print(f"total={total.item():.4f} mean={a.mean():.4f} std={a.std(unbiased=True):.4f} shape={tuple(a.shape)}")
buf = io.BytesIO()
torch.save({"a": a, "step": 3, "names": ["x", "y"]}, buf)
buf.seek(0)
state = torch.load(buf)
print("round trip", torch.equal(state["a"], a), state["step"], state["names"])
print("dtype", (a > 0).dtype, a.long().dtype, a.to(torch.float64).dtype, a.type(torch.int32).dtype)
print("norms", a.norm().item(), torch.linalg.vector_norm(a, ord=1, dim=1).tolist())
