# Activation checkpointing in a deep residual MLP: torch.utils.checkpoint.checkpoint(use_reentrant=False)
# per block and checkpoint_sequential over an nn.Sequential; gradients must equal the plain run's, checked with
# torch.allclose over named_parameters; a nn.init.orthogonal_/zeros_ init via apply(); SGD with nesterov.
import copy

import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1, self.fc2 = nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class DeepMLP(nn.Module):
    def __init__(self, dim=16, depth=6, use_checkpoint=False):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, 1)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        for blk in self.blocks:
            x = checkpoint(blk, x, use_reentrant=False) if self.use_checkpoint and self.training else blk(x)
        return self.head(x)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight, gain=0.5)
        nn.init.zeros_(m.bias)


torch.manual_seed(0)
plain = DeepMLP()
plain.apply(init_weights)
x, y = torch.randn(32, 16), torch.randn(32, 1)
plain(x)
ckpt = copy.deepcopy(plain)
ckpt.use_checkpoint = True
for model in (plain, ckpt):
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    print(f"loss {loss.item():.6f} checkpointed={model.use_checkpoint}")
same = all(torch.allclose(p1.grad, p2.grad, atol=1e-6) for (_, p1), (_, p2)
           in zip(plain.named_parameters(), ckpt.named_parameters()))
print("same gradients:", same)

opt = torch.optim.SGD(ckpt.parameters(), lr=0.05, momentum=0.9, nesterov=True)
for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(ckpt(x), y)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.6f}")

seq = nn.Sequential(*[Block(16) for _ in range(4)], nn.Linear(16, 1))
seq(x)
inp = x.clone().requires_grad_(True)
out = checkpoint_sequential(seq, 2, inp, use_reentrant=False)
out.sum().backward()
ref_inp = x.clone().requires_grad_(True)
seq(ref_inp).sum().backward()
print("sequential input grads agree:", torch.allclose(inp.grad, ref_inp.grad, atol=1e-6), f"{inp.grad.norm():.5f}")
ckpt.eval()
with torch.no_grad():
    print("eval output", ckpt(x[:3]).squeeze(1))
