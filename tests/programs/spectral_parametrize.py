# Constrained weights through torch.nn.utils.parametrize: a custom Symmetric parametrization, the built-in
# spectral_norm parametrization (power iteration on _u/_v buffers), parametrize.cached(), the original weight under
# parametrizations.weight.original, remove_parametrizations, and a Lipschitz-constrained regressor trained with Adam.
import torch
import torch.nn as nn
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils.parametrizations import spectral_norm


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


torch.manual_seed(0)
layer = nn.Linear(4, 4)
layer(torch.zeros(1, 4))
parametrize.register_parametrization(layer, "weight", Symmetric())
print("symmetric:", torch.allclose(layer.weight, layer.weight.T), parametrize.is_parametrized(layer, "weight"))
print(sorted(n for n, _ in layer.named_parameters()))
opt = torch.optim.SGD(layer.parameters(), lr=0.1)
x = torch.randn(16, 4)
for step in range(3):
    loss = (layer(x) - x.flip(1)).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"sym step {step} loss {loss.item():.5f} still symmetric {torch.allclose(layer.weight, layer.weight.T)}")
with parametrize.cached():
    a = layer.weight
    b = layer.weight
    print("cached same object:", a is b)
parametrize.remove_parametrizations(layer, "weight", leave_parametrized=True)
print("removed:", parametrize.is_parametrized(layer), type(layer.weight).__name__)

net = nn.Sequential(spectral_norm(nn.Linear(3, 32)), nn.ReLU(), spectral_norm(nn.Linear(32, 1)))
X = torch.randn(64, 3)
Y = torch.sin(X.sum(1, keepdim=True))
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(8):
    loss = nn.functional.mse_loss(net(X), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 2 == 0:
        print(f"lipschitz step {step} loss {loss.item():.5f}")
net.eval()
with torch.no_grad():
    sigma = torch.linalg.matrix_norm(net[0].weight, ord=2).item()
print(f"top singular value {sigma:.4f}", "keys:", [k for k in net.state_dict() if k.startswith("0.")])
