# Survival analysis with a Cox proportional-hazards network: synthetic censored times, sorting by time
# descending with argsort, the negative partial log-likelihood from torch.logcumsumexp over the risk set,
# Harrell's concordance index computed with broadcasting, and a risk-score ranking of held-out subjects.
import torch
import torch.nn as nn


def cox_ph_loss(risk, time, event):
    order = torch.argsort(time, descending=True)
    risk, event = risk[order], event[order]
    log_risk_set = torch.logcumsumexp(risk, dim=0)
    return -((risk - log_risk_set) * event).sum() / event.sum().clamp(min=1)


def concordance(risk, time, event):
    comparable = (time.unsqueeze(1) < time.unsqueeze(0)) & event.bool().unsqueeze(1)
    concordant = (risk.unsqueeze(1) > risk.unsqueeze(0)) & comparable
    ties = (risk.unsqueeze(1) == risk.unsqueeze(0)) & comparable
    return ((concordant.sum() + 0.5 * ties.sum()) / comparable.sum()).item()


torch.manual_seed(0)
n = 150
X = torch.randn(n, 5)
beta = torch.tensor([0.8, -0.5, 0.0, 0.3, 0.0])
hazard = torch.exp(X @ beta)
T = -torch.log(torch.rand(n)) / hazard
C = torch.rand(n) * 2.0
time = torch.minimum(T, C)
event = (T <= C).float()
print(f"events {int(event.sum().item())} censored {int((1 - event).sum().item())}")
print(f"median time {time.median().item():.4f} quantiles {torch.quantile(time, torch.tensor([0.25, 0.75])).numpy().round(4)}")

net = nn.Sequential(nn.Linear(5, 16), nn.SELU(), nn.AlphaDropout(0.0), nn.Linear(16, 1, bias=False))
opt = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-4)
train, test = slice(0, 110), slice(110, None)
for epoch in range(40):
    risk = net(X[train]).squeeze(-1)
    loss = cox_ph_loss(risk, time[train], event[train])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch:2d} loss {loss.item():.4f} c-index {concordance(risk.detach(), time[train], event[train]):.4f}")
net.eval()
with torch.no_grad():
    risk = net(X[test]).squeeze(-1)
    print(f"test c-index {concordance(risk, time[test], event[test]):.4f}")
    ranked = torch.argsort(risk, descending=True)[:5]
    print("highest risk", ranked.tolist(), risk[ranked].numpy().round(3))
