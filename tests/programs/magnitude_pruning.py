# Magnitude pruning with torch.nn.utils.prune: l1_unstructured on a layer's weight (weight_orig + weight_mask
# reparametrisation and its forward pre-hook), ln_structured on rows, global_unstructured across layers,
# sparsity reports, fine-tuning with the masks in place, then prune.remove to make the pruning permanent.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


class LeNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 24)
        self.fc2 = nn.Linear(24, 12)
        self.fc3 = nn.Linear(12, 3)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def sparsity(t):
    return 100.0 * float(torch.sum(t == 0)) / float(t.nelement())


torch.manual_seed(0)
x = torch.randn(64, 16)
y = torch.randint(0, 3, (64,))
model = LeNetish()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(20):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
print(f"dense loss {F.cross_entropy(model(x), y).item():.4f}")

prune.l1_unstructured(model.fc1, name="weight", amount=0.3)
print([name for name, _ in model.fc1.named_parameters()])
print([name for name, _ in model.fc1.named_buffers()])
print("fc1 sparsity", f"{sparsity(model.fc1.weight):.2f}%", "pruned:", prune.is_pruned(model))
print("hooks", len(model.fc1._forward_pre_hooks))
prune.ln_structured(model.fc2, name="weight", amount=2, n=2, dim=0)
print("fc2 zero rows", (model.fc2.weight.abs().sum(1) == 0).nonzero().flatten().tolist())

parameters_to_prune = ((model.fc1, "weight"), (model.fc2, "weight"), (model.fc3, "weight"))
prune.global_unstructured(parameters_to_prune, pruning_method=prune.L1Unstructured, amount=0.5)
for name in ("fc1", "fc2", "fc3"):
    print(name, f"{sparsity(getattr(model, name).weight):.2f}%")
total_zero = sum(torch.sum(getattr(model, n).weight == 0) for n in ("fc1", "fc2", "fc3"))
total = sum(getattr(model, n).weight.nelement() for n in ("fc1", "fc2", "fc3"))
print(f"global sparsity {100.0 * float(total_zero) / float(total):.2f}%")
print(f"pruned loss {F.cross_entropy(model(x), y).item():.4f}")

opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(10):
    opt.zero_grad()
    F.cross_entropy(model(x), y).backward()
    opt.step()
print(f"fine-tuned loss {F.cross_entropy(model(x), y).item():.4f}")
print("masked entries stay zero:", bool((model.fc2.weight[model.fc2.weight_mask == 0] == 0).all()))

for name in ("fc1", "fc2", "fc3"):
    prune.remove(getattr(model, name), "weight")
print([name for name, _ in model.fc1.named_parameters()], prune.is_pruned(model))
print(sorted(model.state_dict().keys()))
print(f"final fc3 sparsity {sparsity(model.fc3.weight):.2f}%")
