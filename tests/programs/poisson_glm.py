# Count regression the statistician's way: a Poisson GLM with a log link trained with nn.PoissonNLLLoss
# (log_input=True, and full=True for the Stirling term), the same NLL from torch.distributions.Poisson and by hand
# with torch.lgamma, an overdispersed negative-binomial head (NegativeBinomial(total_count, logits=...)), deviance
# and Pearson chi-square, exposure offsets with log(), and torch.special.gammaln / xlogy in the deviance.
import torch
import torch.nn as nn
from torch.distributions import NegativeBinomial, Poisson

torch.manual_seed(0)
n = 400
X = torch.randn(n, 3)
exposure = torch.rand(n) * 2 + 0.5
beta = torch.tensor([0.5, -0.3, 0.2])
rate = torch.exp(0.3 + X @ beta) * exposure
mix = torch.exp(0.5 * torch.randn(n))  # gamma-ish overdispersion, kept simple
y = torch.floor(rate * mix + torch.rand(n))
print(f"mean count {y.mean():.3f} variance {y.var():.3f} zeros {(y == 0).float().mean():.3f}")

lin = nn.Linear(3, 1)
crit = nn.PoissonNLLLoss(log_input=True, full=False)
crit_full = nn.PoissonNLLLoss(log_input=True, full=True)
opt = torch.optim.LBFGS(lin.parameters(), lr=1, max_iter=50, line_search_fn="strong_wolfe")


def closure():
    opt.zero_grad()
    log_mu = lin(X).squeeze(1) + exposure.log()
    loss = crit(log_mu, y)
    loss.backward()
    return loss


for i in range(3):
    loss = opt.step(closure)
    print(f"lbfgs round {i} loss {loss.item():.5f}")
with torch.no_grad():
    log_mu = lin(X).squeeze(1) + exposure.log()
    mu = log_mu.exp()
    nll_full = crit_full(log_mu, y)
    nll_dist = -Poisson(mu).log_prob(y).mean()
    nll_hand = (mu - y * log_mu + torch.lgamma(y + 1)).mean()
    print(f"coefficients {[round(v, 4) for v in lin.weight.squeeze().tolist()]} intercept {lin.bias.item():.4f}")
    print(f"full NLL {nll_full:.4f} distribution NLL {nll_dist:.4f} by hand {nll_hand:.4f}")
    deviance = 2 * (torch.special.xlogy(y, y / mu) - (y - mu)).sum()
    pearson = ((y - mu) ** 2 / mu).sum()
    print(f"deviance {deviance:.2f} pearson {pearson:.2f} dispersion {pearson / (n - 4):.3f}")

# negative binomial: a learned log total_count next to the linear predictor
head = nn.Linear(3, 1)
log_r = nn.Parameter(torch.tensor(0.0))
opt = torch.optim.Adam([*head.parameters(), log_r], lr=0.05)
for step in range(150):
    log_mu = head(X).squeeze(1) + exposure.log()
    r = log_r.exp()
    dist = NegativeBinomial(total_count=r, logits=log_mu - r.log())
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 49:
        print(f"nb step {step + 1} nll {loss.item():.4f} r {r.item():.3f} mean check {(dist.mean - log_mu.exp()).abs().max():.2e}")
with torch.no_grad():
    print(f"nb variance/mean at the average {(dist.variance / dist.mean).mean():.3f}")
    print(f"gammaln agrees with lgamma {torch.allclose(torch.special.gammaln(y + 1), torch.lgamma(y + 1))}")
