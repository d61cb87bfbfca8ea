# Gaussian-process regression written out in torch: an RBF kernel with log-parameterised lengthscale,
# outputscale and noise, the Cholesky factor via torch.linalg.cholesky, alpha by torch.cholesky_solve,
# the log marginal likelihood with the log-determinant from the diagonal, hyperparameters fitted with Adam,
# and the predictive mean/variance with torch.linalg.solve_triangular.
import math

import torch

torch.manual_seed(0)
X = torch.rand(20, 1, dtype=torch.float64) * 6
y = torch.sin(X).squeeze(-1) + 0.1 * torch.randn(20, dtype=torch.float64)

log_ls = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
log_os = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
log_noise = torch.tensor(-2.0, dtype=torch.float64, requires_grad=True)


def rbf(a, b):
    d2 = (a.unsqueeze(1) - b.unsqueeze(0)).pow(2).sum(-1)
    return log_os.exp() * torch.exp(-0.5 * d2 / log_ls.exp() ** 2)


def neg_mll():
    n = X.shape[0]
    K = rbf(X, X) + log_noise.exp() * torch.eye(n, dtype=X.dtype)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
    return 0.5 * (y @ alpha.squeeze(-1)) + torch.log(torch.diagonal(L)).sum() + 0.5 * n * math.log(2 * math.pi)


opt = torch.optim.Adam([log_ls, log_os, log_noise], lr=0.05)
for it in range(40):
    opt.zero_grad()
    loss = neg_mll()
    loss.backward()
    opt.step()
    if it % 10 == 0:
        print(f"it {it:2d} nmll {loss.item():.5f} ls {log_ls.exp().item():.4f} noise {log_noise.exp().item():.5f}")

with torch.no_grad():
    Xs = torch.linspace(0, 6, 5, dtype=torch.float64).unsqueeze(-1)
    K = rbf(X, X) + log_noise.exp() * torch.eye(20, dtype=X.dtype)
    L = torch.linalg.cholesky(K)
    Ks = rbf(X, Xs)
    alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
    mean = (Ks.T @ alpha).squeeze(-1)
    v = torch.linalg.solve_triangular(L, Ks, upper=False)
    var = rbf(Xs, Xs).diagonal() - (v * v).sum(0)
    print("mean", mean.numpy().round(4))
    print("std", var.clamp_min(0).sqrt().numpy().round(4))
    print("logdet check", torch.allclose(2 * torch.log(L.diagonal()).sum(), torch.logdet(K)))
