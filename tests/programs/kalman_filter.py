# A Kalman filter for a constant-velocity tracker written with batched linear algebra, its noise variances
# learned by maximising the innovation log-likelihood: log-parameterised variances, torch.diag_embed,
# predict/update steps with matrix products and torch.linalg.solve for the gain, the innovation covariance
# kept symmetric, MultivariateNormal(loc, covariance_matrix).log_prob summed over time, Adam, and an RTS-free
# filtered RMSE before and after fitting.
import torch
from torch.distributions import MultivariateNormal

torch.manual_seed(0)
T, dt, B = 20, 0.1, 8
F_ = torch.tensor([[1.0, dt], [0.0, 1.0]])
H = torch.tensor([[1.0, 0.0]])
true_q, true_r = 0.05, 0.2
states = torch.zeros(B, T, 2)
s = torch.stack([torch.zeros(B), torch.ones(B)], dim=1)
for t in range(T):
    s = s @ F_.T + torch.randn(B, 2) * torch.tensor([0.0, true_q**0.5])
    states[:, t] = s
obs = states[..., :1] + true_r**0.5 * torch.randn(B, T, 1)


def kalman(obs, log_q, log_r):
    Q = torch.diag_embed(torch.stack([torch.tensor(1e-6), log_q.exp()]))
    R = log_r.exp().view(1, 1)
    m = torch.zeros(B, 2)
    P = torch.eye(2).expand(B, 2, 2) * 1.0
    ll = 0.0
    means = []
    for t in range(T):
        m = m @ F_.T
        P = F_ @ P @ F_.T + Q
        S = H @ P @ H.T + R
        S = 0.5 * (S + S.transpose(-1, -2))
        innov = obs[:, t] - m @ H.T
        ll = ll + MultivariateNormal(torch.zeros(1), covariance_matrix=S).log_prob(innov).sum()
        K = torch.linalg.solve(S, H @ P).transpose(-1, -2)  # P H^T S^-1
        m = m + (K @ innov.unsqueeze(-1)).squeeze(-1)
        P = (torch.eye(2) - K @ H) @ P
        means.append(m)
    return ll, torch.stack(means, dim=1)


log_q = torch.tensor(0.0, requires_grad=True)
log_r = torch.tensor(0.0, requires_grad=True)
with torch.no_grad():
    _, m0 = kalman(obs, log_q, log_r)
print(f"initial rmse {(m0[..., 0] - states[..., 0]).pow(2).mean().sqrt():.4f}")
opt = torch.optim.Adam([log_q, log_r], lr=0.05)
for it in range(20):
    ll, _ = kalman(obs, log_q, log_r)
    loss = -ll / (B * T)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it % 5 == 4:
        print(f"iter {it + 1} nll/step {loss.item():.4f} q {log_q.exp().item():.4f} r {log_r.exp().item():.4f}")
with torch.no_grad():
    _, m1 = kalman(obs, log_q, log_r)
    print(f"fitted rmse {(m1[..., 0] - states[..., 0]).pow(2).mean().sqrt():.4f}")
    print(f"velocity estimate at the end {m1[:, -1, 1].mean():.4f} (true {states[:, -1, 1].mean():.4f})")
