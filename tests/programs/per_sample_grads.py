# Per-sample gradients with torch.func the way the tutorial writes them: functional_call over a params dict,
# grad of a single-sample loss, vmap over the batch (in_dims=(None, None, 0, 0)); then DP-SGD-style clipping of
# each sample's gradient norm, noise-free averaging and a manual SGD step, checked against the batched backward.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, jacrev, vmap


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
model = SimpleMLP()
data = torch.randn(16, 6)
targets = torch.randint(0, 3, (16,))
print(f"initial loss {F.cross_entropy(model(data), targets).item():.5f}")

params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    return F.cross_entropy(predictions, targets)


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for name, g in per_sample_grads.items():
    print(name, tuple(g.shape))

# the mean of per-sample gradients is the batch gradient
model.zero_grad()
F.cross_entropy(model(data), targets).backward()
for name, p in model.named_parameters():
    print(name, "matches batched:", torch.allclose(per_sample_grads[name].mean(0), p.grad, atol=1e-6))

# DP-SGD style: clip every sample's full gradient to norm <= C, then average and step
C, lr = 0.5, 0.5
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample_grads.values()], dim=1).norm(dim=1)
print("per-sample norms", norms.numpy().round(4))
factor = (C / (norms + 1e-6)).clamp(max=1.0)
with torch.no_grad():
    for name, p in model.named_parameters():
        g = per_sample_grads[name]
        clipped = g * factor.view(-1, *([1] * (g.dim() - 1)))
        p -= lr * clipped.mean(0)
print(f"loss after one private step {F.cross_entropy(model(data), targets).item():.5f}")

# jacrev of the model output w.r.t. its input, per sample
jac = vmap(jacrev(lambda x: functional_call(model, params, (x,))))(data[:4])
print("jacobian shape", tuple(jac.shape))
print(jac[0].round(decimals=4))
