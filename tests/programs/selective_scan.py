# A Mamba/S4-style selective state-space layer: input-dependent step sizes (softplus), a discretised
# diagonal state matrix exp(delta * A), the recurrence computed once by a sequential loop and once in
# parallel with cumsum of log-decays and einsum, then a small sequence-regression training loop.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SelectiveSSM(nn.Module):
    def __init__(self, d_model=8, d_state=4):
        super().__init__()
        self.in_proj = nn.Linear(d_model, 2 * d_model)
        self.dt_proj = nn.Linear(d_model, d_model)
        self.B_proj = nn.Linear(d_model, d_state, bias=False)
        self.C_proj = nn.Linear(d_model, d_state, bias=False)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_model, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(d_model))
        self.out_proj = nn.Linear(d_model, d_model)

    def scan_parallel(self, u, delta, A, B, C):
        # h_t = sum_{s<=t} exp(sum_{r=s+1..t} delta_r A) * delta_s B_s u_s
        dA = torch.einsum("bld,dn->bldn", delta, A)          # log decay per step (negative)
        cum = torch.cumsum(dA, dim=1)
        dBu = torch.einsum("bld,bln,bld->bldn", delta, B, u)
        # decay from s to t = exp(cum_t - cum_s); mask s > t
        L = u.shape[1]
        diff = cum.unsqueeze(2) - cum.unsqueeze(1)             # b, t, s, d, n
        mask = torch.tril(torch.ones(L, L, dtype=torch.bool)).view(1, L, L, 1, 1)
        weights = torch.where(mask, diff, torch.full_like(diff, -math.inf)).exp()
        h = torch.einsum("btsdn,bsdn->btdn", weights, dBu)
        return torch.einsum("btdn,btn->btd", h, C)

    def scan_loop(self, u, delta, A, B, C):
        b, L, d = u.shape
        h = torch.zeros(b, d, A.shape[1])
        ys = []
        for t in range(L):
            dA = torch.exp(delta[:, t].unsqueeze(-1) * A)
            h = dA * h + delta[:, t].unsqueeze(-1) * B[:, t].unsqueeze(1) * u[:, t].unsqueeze(-1)
            ys.append((h @ C[:, t].unsqueeze(-1)).squeeze(-1))
        return torch.stack(ys, dim=1)

    def forward(self, x, parallel=True):
        xz = self.in_proj(x)
        u, z = xz.chunk(2, dim=-1)
        u = F.silu(u)
        delta = F.softplus(self.dt_proj(u))
        A = -torch.exp(self.A_log)
        B, C = self.B_proj(u), self.C_proj(u)
        y = self.scan_parallel(u, delta, A, B, C) if parallel else self.scan_loop(u, delta, A, B, C)
        y = y + u * self.D
        return self.out_proj(y * F.silu(z))


model = SelectiveSSM()
x = torch.randn(4, 12, 8)
with torch.no_grad():
    a, b = model(x, parallel=True), model(x, parallel=False)
print(f"parallel vs loop max diff small: {(a - b).abs().max().item() < 1e-4}")

# a decay-product check: cumprod of per-step decays equals exp(cumsum(log))
decays = torch.sigmoid(torch.randn(6))
print("cumprod", [round(v, 4) for v in torch.cumprod(decays, 0).tolist()])
print("via cumsum", [round(v, 4) for v in decays.log().cumsum(0).exp().tolist()])

# learn to output a running mean of the input (a task a scan can do)
target = torch.cumsum(x, dim=1) / torch.arange(1, 13).view(1, -1, 1)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=30)
for step in range(30):
    opt.zero_grad()
    loss = F.mse_loss(model(x), target)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 10 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}")
print(f"A range: {(-torch.exp(model.A_log)).min().item():.3f} .. {(-torch.exp(model.A_log)).max().item():.3f}")
