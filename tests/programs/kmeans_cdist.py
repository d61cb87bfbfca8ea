# k-means clustering the way a data scientist writes it in torch: blobs from randn around centres, k-means++
# seeding with torch.multinomial over squared distances, Lloyd iterations with torch.cdist + argmin, centroid
# updates by index_add_ and bincount (empty clusters kept), inertia, convergence by torch.allclose, and a
# silhouette score from the full distance matrix.
import torch

torch.manual_seed(0)
centres = torch.tensor([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0], [6.0, -1.0]])
X = torch.cat([c + 0.7 * torch.randn(50, 2) for c in centres])
n, k = X.shape[0], 4


def kmeans_pp(X, k):
    idx = torch.randint(0, X.shape[0], (1,))
    C = X[idx]
    while C.shape[0] < k:
        d2 = torch.cdist(X, C).min(dim=1).values ** 2
        nxt = torch.multinomial(d2 / d2.sum(), 1)
        C = torch.cat([C, X[nxt]], dim=0)
    return C


C = kmeans_pp(X, k)
for it in range(20):
    D = torch.cdist(X, C)
    labels = D.argmin(dim=1)
    counts = torch.bincount(labels, minlength=k)
    sums = torch.zeros_like(C).index_add_(0, labels, X)
    new_C = torch.where(counts.unsqueeze(1) > 0, sums / counts.clamp(min=1).unsqueeze(1).float(), C)
    inertia = (X - new_C[labels]).pow(2).sum().item()
    converged = torch.allclose(new_C, C, atol=1e-6)
    C = new_C
    print(f"iter {it:2d} inertia {inertia:9.3f} sizes {counts.tolist()}")
    if converged:
        break

order = torch.argsort(C[:, 0] * 10 + C[:, 1])
print("centres", [[round(v, 3) for v in row] for row in C[order].tolist()])

# silhouette: mean intra-cluster distance vs nearest other cluster
D = torch.cdist(X, X)
onehot = torch.nn.functional.one_hot(labels, k).float()
mean_to = (D @ onehot) / onehot.sum(0).clamp(min=1)
a = (mean_to * onehot).sum(1) * onehot.sum(0)[labels] / (onehot.sum(0)[labels] - 1).clamp(min=1)
b = mean_to.masked_fill(onehot.bool(), float("inf")).min(dim=1).values
s = (b - a) / torch.maximum(a, b)
print(f"silhouette {s.mean():.4f} worst {s.min().item():.4f}")
print(f"points per cluster {labels.unique(return_counts=True)[1].sort(descending=True).values.tolist()}")
