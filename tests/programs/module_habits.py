# nn.Module habits: register_buffer (persistent and not), named_modules/children, apply() with custom
# init (kaiming_normal_, zeros_, trunc_normal_), freezing with requires_grad_(False), parameter counts,
# train/eval flags, state_dict keys, strict=False loading, double()/float() conversions, and
# ModuleDict/ParameterList.
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)
        self.register_buffer("step", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.zeros(d), persistent=False)

    def forward(self, x):
        if self.training:
            self.step += 1
        return torch.relu(self.bn(self.fc(x))) + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": Block(6), "b": Block(6)})
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(6)) for _ in range(2)])
        self.head = nn.Linear(6, 2)

    def forward(self, x):
        for i, key in enumerate(["a", "b"]):
            x = self.blocks[key](x) * self.scales[i]
        return self.head(x)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        if m.bias is not None:
            nn.init.zeros_(m.bias)


net = Net()
net.apply(init_weights)
print([name for name, _ in net.named_modules()][:5])
print([type(c).__name__ for c in net.children()])
print("state keys", list(net.state_dict().keys()))
print("total", sum(p.numel() for p in net.parameters()))

for p in net.blocks["a"].parameters():
    p.requires_grad_(False)
print("trainable", sum(p.numel() for p in net.parameters() if p.requires_grad))

opt = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.05)
x = torch.randn(8, 6)
target = torch.randint(0, 2, (8,))
for _ in range(3):
    loss = nn.functional.cross_entropy(net(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"loss {loss.item():.4f}", net.blocks["a"].step.item(), net.blocks["b"].step.item())
print("frozen grad is None:", net.blocks["a"].fc.weight.grad is None)

net.eval()
print("training flags", net.training, net.blocks["b"].bn.training)
with torch.no_grad():
    out_eval = net(x)
d = net.double()
print("double", next(d.parameters()).dtype, d(x.double()).dtype)
net.float()

sd = {k: v.clone() for k, v in net.state_dict().items() if not k.startswith("head")}
fresh = Net()
result = fresh.load_state_dict(sd, strict=False)
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
fresh.eval()
with torch.no_grad():
    print("same trunk", torch.allclose(fresh.blocks["b"](x), net.blocks["b"](x)))
print(out_eval.shape, out_eval.dtype, out_eval.requires_grad)
