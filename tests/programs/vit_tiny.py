# A tiny Vision Transformer: conv patch embedding, a cls token and position embedding as Parameters,
# nn.TransformerEncoder (batch_first, norm_first), AdamW with a weight-decay split, cosine schedule with warmup.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class PatchEmbed(nn.Module):
    def __init__(self, img=8, patch=4, in_ch=1, dim=16):
        super().__init__()
        self.proj = nn.Conv2d(in_ch, dim, kernel_size=patch, stride=patch)
        self.num_patches = (img // patch) ** 2

    def forward(self, x):
        x = self.proj(x)                      # B, D, H/p, W/p
        return x.flatten(2).transpose(1, 2)   # B, N, D


class ViT(nn.Module):
    def __init__(self, num_classes=3, dim=16, depth=2, heads=2):
        super().__init__()
        self.patch = PatchEmbed(dim=dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, self.patch.num_patches + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=2 * dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch(x)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        x = torch.cat((cls, x), dim=1) + self.pos_embed
        x = self.encoder(x)
        return self.head(self.norm(x[:, 0]))


model = ViT()
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"params: {n_params}")

decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim < 2 or "norm" in name or name.endswith(".bias") else decay).append(p)
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)

total, warmup = 12, 3


def lr_lambda(step):
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
x = torch.randn(10, 1, 8, 8)
y = torch.randint(0, 3, (10,))
for step in range(total):
    logits = model(x)
    loss = F.cross_entropy(logits, y, label_smoothing=0.1)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    sched.step()
    if step % 3 == 0:
        print(f"step {step:2d} loss {loss.item():.4f} grad_norm {gn:.4f} lr {sched.get_last_lr()[0]:.5f}")

model.eval()
with torch.no_grad():
    pred = model(x).argmax(dim=-1)
acc = (pred == y).float().mean()
print(f"train acc {acc.item():.2f}", pred.tolist())
