# A Gaussian mixture fitted by EM, the way a statistics user writes it: torch.distributions for the
# log-densities, logsumexp responsibilities, weighted means and covariances with einsum, and a check
# against MultivariateNormal sampling.
import torch
from torch.distributions import MultivariateNormal, Categorical, Normal, kl_divergence

torch.manual_seed(0)
true_means = torch.tensor([[-2.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
X = torch.cat([torch.randn(60, 2) * 0.5 + m for m in true_means])
K, (N, D) = 3, X.shape
means = X[torch.randperm(N)[:K]].clone()
covs = torch.eye(D).repeat(K, 1, 1)
weights = torch.full((K,), 1.0 / K)
prev = -float("inf")
for it in range(30):
    comp = MultivariateNormal(means, covariance_matrix=covs)
    log_p = comp.log_prob(X.unsqueeze(1)) + weights.log()
    ll = torch.logsumexp(log_p, dim=1)
    resp = (log_p - ll.unsqueeze(1)).exp()
    Nk = resp.sum(0)
    weights = Nk / N
    means = (resp.T @ X) / Nk.unsqueeze(1)
    diff = X.unsqueeze(1) - means
    covs = torch.einsum("nk,nki,nkj->kij", resp, diff, diff) / Nk.view(K, 1, 1) + 1e-4 * torch.eye(D)
    total = ll.mean().item()
    if it % 10 == 0:
        print(f"iter {it:2d} mean log-likelihood {total:.4f}")
    if abs(total - prev) < 1e-6:
        break
    prev = total
order = means[:, 0].argsort()
print("means", means[order].round(decimals=2).tolist())
print("weights", weights[order].round(decimals=3).tolist())
mix = Categorical(probs=weights)
print("entropy", round(mix.entropy().item(), 4))
samples = MultivariateNormal(means[0], covs[0]).sample((5,))
print("sample shape", tuple(samples.shape))
kl = kl_divergence(Normal(torch.zeros(3), torch.ones(3)), Normal(torch.tensor([0.5, 0.0, -1.0]), torch.full((3,), 2.0)))
print("kl", [round(v, 4) for v in kl.tolist()])
