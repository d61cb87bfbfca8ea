# A mixture-of-experts layer: top-k gating with softmax over the chosen logits, token dispatch by
# boolean masks and index_add_, an auxiliary load-balancing loss, and a training loop with grad clipping.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MoE(nn.Module):
    def __init__(self, d=16, n_experts=4, k=2):
        super().__init__()
        self.k = k
        self.gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList([nn.Sequential(nn.Linear(d, 32), nn.GELU(), nn.Linear(32, d)) for _ in range(n_experts)])

    def forward(self, x):
        B, T, D = x.shape
        flat = x.view(-1, D)
        logits = self.gate(flat)
        topv, topi = logits.topk(self.k, dim=-1)
        weights = F.softmax(topv, dim=-1)
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            mask = (topi == e)
            rows = mask.any(dim=-1).nonzero(as_tuple=True)[0]
            if rows.numel() == 0:
                continue
            w = (weights * mask).sum(dim=-1)[rows].unsqueeze(-1)
            out.index_add_(0, rows, w * expert(flat[rows]))
        probs = logits.softmax(-1)
        load = F.one_hot(topi[:, 0], num_classes=len(self.experts)).float().mean(0)
        aux = (probs.mean(0) * load).sum() * len(self.experts)
        return out.view(B, T, D), aux


model = nn.Sequential()
moe = MoE()
head = nn.Linear(16, 3)
params = list(moe.parameters()) + list(head.parameters())
opt = torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)
X = torch.randn(32, 6, 16)
Y = torch.randint(0, 3, (32,))
for epoch in range(15):
    h, aux = moe(X)
    logits = head(h.mean(1))
    loss = F.cross_entropy(logits, Y) + 0.01 * aux
    opt.zero_grad()
    loss.backward()
    gn = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    opt.step()
    if epoch % 5 == 0:
        acc = (logits.argmax(-1) == Y).float().mean()
        print(f"epoch {epoch} loss={loss.item():.4f} aux={aux.item():.4f} gn={gn:.3f} acc={acc:.2f}")
counts = torch.bincount(moe.gate(X.view(-1, 16)).argmax(-1), minlength=4)
print("expert counts", counts.tolist())
