# Bayesian linear regression by variational inference (Bayes by Backprop): weights as Normal posteriors
# with softplus-parameterised scales, the reparameterization trick via rsample, an analytic
# kl_divergence against a Normal prior, the ELBO summed over data, then a predictive mean/std by sampling
# and a comparison with the closed-form posterior from torch.linalg.solve.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence

torch.manual_seed(0)
N, D = 64, 3
X = torch.randn(N, D)
true_w = torch.tensor([1.5, -2.0, 0.5])
noise = 0.3
y = X @ true_w + 0.7 + noise * torch.randn(N)


class BayesLinear(nn.Module):
    def __init__(self, d_in, prior_std=1.0):
        super().__init__()
        self.w_mu = nn.Parameter(torch.zeros(d_in))
        self.w_rho = nn.Parameter(torch.full((d_in,), -3.0))
        self.b_mu = nn.Parameter(torch.zeros(()))
        self.b_rho = nn.Parameter(torch.tensor(-3.0))
        self.prior = Normal(0.0, prior_std)

    def posterior(self):
        return Normal(self.w_mu, F.softplus(self.w_rho)), Normal(self.b_mu, F.softplus(self.b_rho))

    def forward(self, x):
        qw, qb = self.posterior()
        w, b = qw.rsample(), qb.rsample()
        return x @ w + b

    def kl(self):
        qw, qb = self.posterior()
        return kl_divergence(qw, self.prior).sum() + kl_divergence(qb, self.prior)


model = BayesLinear(D)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
lik_std = torch.tensor(noise)
for step in range(300):
    opt.zero_grad()
    nll = 0.0
    for _ in range(4):
        nll += -Normal(model(X), lik_std).log_prob(y).sum() / 4
    elbo_loss = nll + model.kl()
    elbo_loss.backward()
    opt.step()
    if step % 75 == 0:
        print(f"step {step:3d} -elbo {elbo_loss.item():9.3f} kl {model.kl().item():.3f}")

qw, qb = model.posterior()
print("posterior mean w", [round(v, 2) for v in qw.mean.tolist()], f"b {qb.mean.item():.2f}")
print("posterior std  w", [round(v, 3) for v in qw.stddev.tolist()])

# closed form (with a bias column): Sigma = (X^T X / s^2 + I)^-1, mu = Sigma X^T y / s^2
Xb = torch.cat([X, torch.ones(N, 1)], dim=1)
precision = Xb.T @ Xb / noise ** 2 + torch.eye(D + 1)
mu = torch.linalg.solve(precision, Xb.T @ y / noise ** 2)
cov = torch.linalg.inv(precision)
print("exact mean", [round(v, 2) for v in mu.tolist()])
print("exact std ", [round(v, 3) for v in cov.diagonal().sqrt().tolist()])
print(f"mean abs diff to exact {((torch.cat([qw.mean, qb.mean.view(1)]) - mu).abs().max().item() < 0.05)}")

with torch.no_grad():
    x_new = torch.tensor([[1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    draws = torch.stack([model(x_new) for _ in range(200)])
    exact_mean = torch.cat([x_new, torch.ones(2, 1)], 1) @ mu
print(f"predictive draws shape {tuple(draws.shape)}; exact predictive means {[round(v, 2) for v in exact_mean.tolist()]}")
