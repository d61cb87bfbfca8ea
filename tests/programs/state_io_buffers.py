# Module state habits: register_buffer (persistent and not), nn.ParameterList, weight tying, a state_dict and an
# optimizer state_dict saved with torch.save into io.BytesIO and loaded into fresh objects, strict=False loading
# reports, and training that continues identically after the round trip.
import io

import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self, n, depth=3):
        super().__init__()
        self.scales = nn.ParameterList([nn.Parameter(torch.ones(n) * (i + 1)) for i in range(depth)])
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))
        self.register_buffer("scratch", torch.zeros(n), persistent=False)
        self.enc = nn.Linear(n, n)
        self.dec = nn.Linear(n, n)
        self.dec.weight = self.enc.weight

    def forward(self, x):
        if self.training:
            self.steps += 1
        for s in self.scales:
            x = torch.tanh(self.enc(x) * s)
        self.scratch.copy_(x.detach().mean(0))
        return self.dec(x)


def train(model, opt, x, n):
    for _ in range(n):
        loss = ((model(x) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


torch.manual_seed(0)
x = torch.randn(16, 4)
model = Scaler(4)
opt = torch.optim.Adam(model.parameters(), lr=0.01)
print("state keys:", list(model.state_dict().keys()))
print("parameters:", len(list(model.parameters())), "tied:", model.dec.weight is model.enc.weight)
print(f"loss after 5 steps {train(model, opt, x, 5):.5f}, steps buffer {model.steps.item()}")

buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optim": opt.state_dict(), "note": "checkpoint"}, buffer)
buffer.seek(0)
ckpt = torch.load(buffer)
print("loaded:", sorted(ckpt.keys()), ckpt["note"], ckpt["model"]["steps"].dtype)

clone = Scaler(4)
clone_opt = torch.optim.Adam(clone.parameters(), lr=0.01)
clone(x)  # a first call, as a user checks the model runs before loading
result = clone.load_state_dict(ckpt["model"])
clone_opt.load_state_dict(ckpt["optim"])
print("missing", result.missing_keys, "unexpected", result.unexpected_keys)
print("equal weights:", all(torch.equal(a, b) for a, b in zip(model.parameters(), clone.parameters())))
print("optimizer step count:", clone_opt.state_dict()["state"][0]["step"].item())

partial = {k: v for k, v in ckpt["model"].items() if not k.startswith("scales")}
partial["extra.weight"] = torch.zeros(1)
report = Scaler(4).load_state_dict(partial, strict=False)
print("strict=False missing", report.missing_keys, "unexpected", report.unexpected_keys)

a = train(model, opt, x, 5)
b = train(clone, clone_opt, x, 5)
print(f"continued: original {a:.6f} clone {b:.6f} same {abs(a - b) < 1e-7}; steps {model.steps.item()} {clone.steps.item()}")
model.eval()
with torch.no_grad():
    out = model(x[:2])
print(out, model.scratch)
