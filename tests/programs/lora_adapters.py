# LoRA fine-tuning written by hand: a pretrained MLP, its nn.Linear layers replaced in place by a LoRALinear
# wrapper (setattr over named_children), the base weights frozen with requires_grad_(False), only the low-rank
# A/B matrices trained (B zero-initialised so training starts from the base model), trainable-parameter
# counts, a state_dict holding only the adapter weights, merging B @ A * scale into the base weight under
# torch.no_grad(), and a check that the merged model computes what the adapted one did.
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=4, alpha=8):
        super().__init__()
        self.base = base
        self.scale = alpha / r
        self.lora_A = nn.Parameter(torch.randn(r, base.in_features) / math.sqrt(base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.lora_A), self.lora_B) * self.scale

    @torch.no_grad()
    def merge(self):
        self.base.weight += (self.lora_B @ self.lora_A) * self.scale
        return self.base


model = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 3))
X = torch.randn(200, 8)
y_pre = (X[:, :3] @ torch.randn(3, 3)).argmax(1)
y_new = (X[:, 3:6] @ torch.randn(3, 3)).argmax(1)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for epoch in range(60):
    loss = F.cross_entropy(model(X), y_pre)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"pretrained loss {loss.item():.4f}")

model.requires_grad_(False)
for name, child in list(model.named_children()):
    if isinstance(child, nn.Linear):
        setattr(model, name, LoRALinear(child))
trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
total = sum(p.numel() for p in model.parameters())
print(f"trainable {trainable} of {total} ({100 * trainable / total:.1f}%)")
with torch.no_grad():
    print(f"new task loss before {F.cross_entropy(model(X), y_new).item():.4f}")

opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2, weight_decay=0.0)
for epoch in range(80):
    loss = F.cross_entropy(model(X), y_new)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 20 == 19:
        acc = (model(X).argmax(1) == y_new).float().mean()
        print(f"epoch {epoch + 1} loss {loss.item():.4f} acc {acc:.3f}")

adapters = {k: v for k, v in model.state_dict().items() if "lora_" in k}
print("adapter keys", sorted(adapters))
with torch.no_grad():
    before = model(X)
    for name, child in list(model.named_children()):
        if isinstance(child, LoRALinear):
            setattr(model, name, child.merge())
    after = model(X)
print(f"merged model max diff {(before - after).abs().max().item():.2e}; modules {[type(m).__name__ for m in model]}")
print(f"frozen base still frozen: {all(not p.requires_grad for p in model.parameters())}")
