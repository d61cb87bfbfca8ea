# A multi-task network: a shared trunk built from nn.Sequential(OrderedDict(...)), task heads in an
# nn.ModuleDict, learned task-uncertainty weights in an nn.ParameterList and a ParameterDict, losses
# collected in a dict and summed with torch.stack, and per-task metrics in a no_grad evaluation.
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiTask(nn.Module):
    def __init__(self, in_dim=12, hidden=24):
        super().__init__()
        self.trunk = nn.Sequential(OrderedDict([
            ("fc1", nn.Linear(in_dim, hidden)),
            ("act1", nn.ReLU()),
            ("drop", nn.Dropout(0.0)),
            ("fc2", nn.Linear(hidden, hidden)),
            ("act2", nn.ReLU()),
        ]))
        self.heads = nn.ModuleDict({
            "cls": nn.Linear(hidden, 3),
            "reg": nn.Linear(hidden, 1),
            "tag": nn.Linear(hidden, 4),
        })
        self.log_vars = nn.ParameterList([nn.Parameter(torch.zeros(1)) for _ in self.heads])
        self.temps = nn.ParameterDict({"cls": nn.Parameter(torch.ones(1))})

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


torch.manual_seed(0)
X = torch.randn(96, 12)
y_cls = (X[:, 0] > 0).long() + (X[:, 1] > 0.5).long()
y_reg = (X[:, 2] * 2 + X[:, 3]).unsqueeze(1)
y_tag = (X[:, 4:8] > 0).float()
model = MultiTask()
print(model.trunk)
print("heads:", list(model.heads.keys()), "fc2 in trunk:", "fc2" in model.trunk._modules, len(model.log_vars))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(10):
    model.train()
    out = model(X)
    losses = {
        "cls": F.cross_entropy(out["cls"] / model.temps["cls"], y_cls),
        "reg": F.mse_loss(out["reg"], y_reg),
        "tag": F.binary_cross_entropy_with_logits(out["tag"], y_tag),
    }
    weighted = [torch.exp(-lv) * losses[k] + lv for lv, k in zip(model.log_vars, losses)]
    total = torch.stack(weighted).sum()
    opt.zero_grad()
    total.backward()
    opt.step()
    if epoch % 3 == 0:
        parts = " ".join(f"{k}={v.item():.4f}" for k, v in losses.items())
        print(f"epoch {epoch} total {total.item():.4f} {parts}")
model.eval()
with torch.no_grad():
    out = model(X)
    acc = (out["cls"].argmax(dim=1) == y_cls).float().mean().item()
    mae = (out["reg"] - y_reg).abs().mean().item()
    tag_acc = ((out["tag"] > 0).float() == y_tag).float().mean().item()
print(f"cls acc {acc:.4f} reg mae {mae:.4f} tag acc {tag_acc:.4f}")
print("log vars", [round(p.item(), 4) for p in model.log_vars], "temp", model.temps["cls"].item())
model.heads["aux"] = nn.Linear(24, 2)
del model.heads["tag"]
print("after edit:", list(model.heads), sum(p.numel() for p in model.heads.parameters()))
print([n for n, _ in model.named_parameters() if n.startswith(("log_vars", "temps"))])
