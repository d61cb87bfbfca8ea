# In-place idioms users write inside a graph: x[:, 0] += 1 on a non-leaf, writes through x.view(-1)[idx],
# y = x.t(); y.add_(1) through a transposed view, masked_fill_ after a clone, index_put_ with accumulate,
# torch.no_grad() parameter surgery, and a small model whose forward edits intermediate activations in place.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

w = torch.randn(3, 4, requires_grad=True)
x = w * 2
x[:, 0] += 1
x.view(-1)[torch.tensor([1, 5, 11])] = torch.tensor([0.5, -0.5, 2.0])
loss = (x ** 2).sum()
loss.backward()
print(f"loss {loss.item():.4f}")
print("grad row0", [round(v, 4) for v in w.grad[0].tolist()])
print("grad col1", [round(v, 4) for v in w.grad[:, 1].tolist()])

a = torch.randn(4, 3, requires_grad=True)
b = a.sin()
bt = b.t()
bt.add_(1.0)
bt[0].mul_(2.0)
out = (b * torch.arange(12.0).view(4, 3)).sum()
out.backward()
print(f"through transposed view: out {out.item():.4f} grad sum {a.grad.sum().item():.4f}")

c = torch.randn(5, requires_grad=True)
d = c.clone()
d.masked_fill_(d < 0, 0.0)
d.index_put_((torch.tensor([0, 0, 2]),), torch.tensor([1.0, 1.0, 3.0]), accumulate=True)
(d * torch.arange(1.0, 6.0)).sum().backward()
print("masked/index_put grad", c.grad.tolist())


class EditNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc1(x)
        h[:, :2] = h[:, :2].sigmoid()        # gate the first two features
        h.clamp_(min=-1.0, max=1.0)
        h = F.gelu(h)
        h.mul_(1.5)
        return self.fc2(h)


net = EditNet()
with torch.no_grad():
    net.fc1.bias.zero_()
    net.fc1.weight[0].fill_(0.1)
    net.fc2.weight.mul_(0.5)
X = torch.randn(16, 6)
Y = torch.randint(0, 3, (16,))
opt = torch.optim.RMSprop(net.parameters(), lr=0.01)
for step in range(15):
    loss = F.cross_entropy(net(X), Y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.4f} fc1 grad norm {net.fc1.weight.grad.norm().item():.4f}")
with torch.no_grad():
    h = net.fc1(X)
    h[h < 0] = 0
    print(f"post-train active fraction {(h > 0).float().mean().item():.3f}")
