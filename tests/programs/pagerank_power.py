# PageRank on a small directed graph the way users write it: an edge list turned into a column-stochastic
# matrix by index_put_(accumulate=True) (out-degree normalisation with bincount), power iteration with mm until the
# L1 change is below 1e-6 (float32: a tolerance of 1e-8 is below its rounding, where the iteration count depends on
# the CPU's BLAS kernels), dangling nodes handled by redistribution, checked against a dense matrix_power solve
# and torch.linalg.eig; then personalised PageRank and top-k nodes.
import torch

torch.manual_seed(0)
n = 12
src = torch.randint(0, n, (40,))
dst = torch.randint(0, n, (40,))
keep = src != dst
src, dst = src[keep], dst[keep]
edges = torch.unique(torch.stack([src, dst]), dim=1)
src, dst = edges
out_deg = torch.bincount(src, minlength=n).float()
dangling = out_deg == 0
print(f"nodes {n} edges {edges.shape[1]} dangling {dangling.sum().item()}")

values = 1.0 / out_deg[src]
# a dense transition matrix built from the edge list (accumulate: repeated edges add up)
M = torch.zeros(n, n).index_put_((dst, src), values, accumulate=True)
print(f"nnz {torch.count_nonzero(M).item()} column sums (non-dangling) ok: {torch.allclose(M.sum(dim=0)[~dangling], torch.ones(int((~dangling).sum())))}")


def pagerank(M, alpha=0.85, personalization=None, tol=1e-6, max_iter=200):
    v = torch.full((n, 1), 1.0 / n) if personalization is None else personalization.view(-1, 1) / personalization.sum()
    r = v.clone()
    for it in range(max_iter):
        dangling_mass = r[dangling].sum()
        r_new = alpha * (torch.mm(M, r) + dangling_mass * v) + (1 - alpha) * v
        delta = (r_new - r).abs().sum().item()
        r = r_new
        if delta < tol:
            break
    return r.squeeze(1), it + 1


rank, iters = pagerank(M)
print(f"converged in {iters} iterations, sum {rank.sum().item():.6f}")
print("rank", [f"{v:.4f}" for v in rank.tolist()])

# dense Google matrix and its dominant eigenvector
D = M.clone()
D[:, dangling] = 1.0 / n
G = 0.85 * D + 0.15 / n
r_pow = torch.linalg.matrix_power(G, 64) @ torch.full((n,), 1.0 / n)
print(f"matches matrix_power: {torch.allclose(rank, r_pow, atol=1e-5)}")
vals, vecs = torch.linalg.eig(G.double())
top = vals.real.argmax()
ev = vecs[:, top].real
ev = ev / ev.sum()
print(f"dominant eigenvalue {vals.real[top].item():.6f}, matches eigvector: {torch.allclose(rank.double(), ev, atol=1e-5)}")

pers = torch.zeros(n)
pers[0] = 1.0
prank, _ = pagerank(M, personalization=pers)
top_vals, top_idx = prank.topk(3)
print("personalised top-3", top_idx.tolist(), [round(v, 4) for v in top_vals.tolist()])
in_weight = torch.zeros(n).scatter_add_(0, dst, values)
print(f"row sums equal scattered in-weights: {torch.allclose(M.sum(dim=1), in_weight)}")
print("argsort by rank", rank.argsort(descending=True).tolist())
