# What users print and poke while debugging: print(model) of nested modules, f-string formatting of 0-d tensors,
# torch.set_printoptions, named_modules/children, module.apply with an init function, a tensor hook that clips a
# gradient, retain_grad on an intermediate, parameters_to_vector/vector_to_parameters, and a deepcopy of the
# model loaded from a state_dict saved to io.BytesIO.
import copy
import io

import torch
from torch import nn
from torch.nn.utils import parameters_to_vector, vector_to_parameters


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d, eps=1e-6)
        self.act = nn.GELU()
        self.drop = nn.Dropout(p=0.1)

    def forward(self, x):
        return x + self.drop(self.act(self.norm(self.fc(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(1, 4, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.blocks = nn.Sequential(*[Block(4) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
        self.emb = nn.Embedding(10, 4, padding_idx=0)
        self.rnn = nn.LSTM(4, 6, num_layers=2, batch_first=True, bidirectional=True)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.stem(x)))).flatten(1)
        h = self.blocks(h)
        return self.heads["cls"](h), self.heads["reg"](h)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.constant_(m.bias, 0.01)


torch.manual_seed(0)
net = Net()
net.apply(init_weights)
print(net)
print([name for name, _ in net.named_children()])
print([name for name, m in net.named_modules() if isinstance(m, nn.Linear)])
print(f"trainable: {sum(p.numel() for p in net.parameters() if p.requires_grad):,}")

x = torch.randn(2, 1, 6, 6)
logits, reg = net(x)
h = net.blocks(torch.randn(2, 4))
h.retain_grad()
seen = []
handle = logits.register_hook(lambda g: seen.append(g.norm().item()) or g.clamp(-0.1, 0.1))
loss = logits.logsumexp(-1).mean() + reg.pow(2).mean() + h.sum() * 0.01
loss.backward()
handle.remove()
print(f"loss {loss:.4f} | as tensor {loss.detach()} | hook saw {len(seen)} gradient, h.grad {h.grad[0, 0]:.3f}")
print(f"{logits.sum():.3f} {reg.mean().item():+.4e} {loss.item():8.4f}")
torch.set_printoptions(precision=2, sci_mode=False)
print(logits)
print(net.emb.weight[0], net.bn.running_mean)
torch.set_printoptions(profile="default")

vec = parameters_to_vector(net.parameters())
print("parameter vector:", tuple(vec.shape), f"norm {vec.norm():.4f}")
vector_to_parameters(vec * 0.5, net.parameters())
print(f"halved: {parameters_to_vector(net.parameters()).norm().item() / vec.norm().item():.4f}")

buffer = io.BytesIO()
torch.save(net.state_dict(), buffer)
buffer.seek(0)
loaded = copy.deepcopy(net)
loaded.load_state_dict(torch.load(buffer))
print(type(loaded).__name__, all(torch.equal(a, b) for a, b in zip(net.state_dict().values(), loaded.state_dict().values())))
net.eval()
loaded.eval()
with torch.no_grad():
    a, _ = net(x)
    b, _ = loaded(x)
print("same outputs:", torch.equal(a, b), a.dtype, a.shape, a.requires_grad)
