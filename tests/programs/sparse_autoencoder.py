# A sparse autoencoder over activations (the interpretability recipe): a TopK activation (torch.topk then
# scatter into zeros), a tied pre-encoder bias, decoder columns renormalised to unit norm after each step
# under torch.no_grad() with F.normalize and .data, the gradient component parallel to the decoder columns
# removed, dead-feature counting with a running "last fired" counter, fraction of variance explained, and
# feature frequencies.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
d, n_feat, k = 16, 64, 4
true_dirs = F.normalize(torch.randn(32, d), dim=1)
codes = torch.rand(2048, 32) * (torch.rand(2048, 32) < 0.08).float()
acts = codes @ true_dirs + 0.01 * torch.randn(2048, d)


class SAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.W_enc = nn.Parameter(torch.randn(d, n_feat) * 0.1)
        self.W_dec = nn.Parameter(self.W_enc.detach().t().clone())
        self.b_enc = nn.Parameter(torch.zeros(n_feat))
        self.b_dec = nn.Parameter(acts.mean(0).clone())

    def encode(self, x):
        pre = (x - self.b_dec) @ self.W_enc + self.b_enc
        top = torch.topk(pre, k, dim=-1)
        return torch.zeros_like(pre).scatter(-1, top.indices, F.relu(top.values))

    def forward(self, x):
        z = self.encode(x)
        return z @ self.W_dec + self.b_dec, z


sae = SAE()
with torch.no_grad():
    sae.W_dec.data = F.normalize(sae.W_dec.data, dim=1)
opt = torch.optim.Adam(sae.parameters(), lr=2e-3)
steps_since_fired = torch.zeros(n_feat, dtype=torch.long)
for step in range(300):
    idx = torch.randint(0, acts.shape[0], (128,))
    x = acts[idx]
    recon, z = sae(x)
    loss = (recon - x).pow(2).sum(-1).mean()
    opt.zero_grad()
    loss.backward()
    with torch.no_grad():
        W = sae.W_dec
        W.grad -= (W.grad * W).sum(1, keepdim=True) * W
    opt.step()
    with torch.no_grad():
        sae.W_dec.data = F.normalize(sae.W_dec.data, dim=1)
    fired = (z > 0).any(0)
    steps_since_fired += 1
    steps_since_fired[fired] = 0
    if step % 100 == 99:
        print(f"step {step + 1} mse {loss.item():.5f} dead {(steps_since_fired > 50).sum().item()}")

with torch.no_grad():
    recon, z = sae(acts)
    fve = 1 - (acts - recon).pow(2).sum() / (acts - acts.mean(0)).pow(2).sum()
    l0 = (z > 0).float().sum(-1).mean()
    freq = (z > 0).float().mean(0)
    cos = (F.normalize(sae.W_dec, dim=1) @ true_dirs.t()).abs().max(1).values
    print(f"explained variance {fve.item():.4f} L0 {l0.item():.2f}")
    print(f"top feature frequencies {[round(f, 3) for f in freq.sort(descending=True).values[:5].tolist()]}")
    print(f"features matching a true direction (cos > 0.9): {(cos > 0.9).sum().item()}")
    print(f"decoder norms {sae.W_dec.norm(dim=1).min().item():.4f} {sae.W_dec.norm(dim=1).max().item():.4f}")
