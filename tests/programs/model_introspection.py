# Model bookkeeping habits: apply() with a custom init, named_modules/named_buffers, register_buffer,
# parameter counts, freezing by name, torch.save/torch.load through io.BytesIO, strict=False loading,
# train/eval flags, and a forward pre-hook that records input shapes.
import io
import torch
import torch.nn as nn

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.bn = nn.BatchNorm1d(d)
        self.drop = nn.Dropout(0.1)
        self.register_buffer("calls", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.calls += 1
        return x + self.drop(torch.relu(self.bn(self.fc(x))))


model = nn.Sequential(nn.Linear(4, 8), Block(8), Block(8), nn.Linear(8, 2))


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        nn.init.constant_(m.bias, 0.01)


model.apply(init)
print("modules", [name for name, _ in model.named_modules()][:6])
print("buffers", [name for name, _ in model.named_buffers()])
total = sum(p.numel() for p in model.parameters())
train = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"params total={total} trainable={train}")
for name, p in model.named_parameters():
    if name.startswith("1."):
        p.requires_grad = False
print("trainable after freeze", sum(p.numel() for p in model.parameters() if p.requires_grad))
shapes = []
handle = model[1].register_forward_pre_hook(lambda mod, inp: shapes.append(tuple(inp[0].shape)))
x = torch.randn(16, 4)
opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
for step in range(3):
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} frozen grad {model[1].fc.weight.grad}")
handle.remove()
print("hook shapes", shapes)
print("calls", model[1].calls.item(), model[2].calls.item())
buf = io.BytesIO()
torch.save({"model": model.state_dict(), "step": 3}, buf)
buf.seek(0)
ckpt = torch.load(buf)
fresh = nn.Sequential(nn.Linear(4, 8), Block(8), Block(8), nn.Linear(8, 2))
print("fresh output before loading", tuple(fresh(x).shape))
missing = fresh.load_state_dict(ckpt["model"], strict=True)
print("loaded", missing, ckpt["step"])
partial = {k: v for k, v in ckpt["model"].items() if not k.startswith("3.")}
res = fresh.load_state_dict(partial, strict=False)
print("missing keys", res.missing_keys, "unexpected", res.unexpected_keys)
model.eval()
fresh.eval()
print("same output", torch.allclose(model(x), fresh(x)))
print("training flags", model.training, model[1].drop.training)
print("bn stats", model[1].bn.running_mean[:3].tolist(), int(model[1].bn.num_batches_tracked))
