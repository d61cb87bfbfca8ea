# Optimizer habits: parameter groups with different lr and weight decay (no decay on biases and norms),
# OneCycleLR, a LambdaLR warmup chained with SequentialLR, get_last_lr logging, state_dict round trips.
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 1))
decay, no_decay = [], []
for name, p in model.named_parameters():
    (no_decay if p.ndim < 2 else decay).append(p)
opt = torch.optim.AdamW([
    {"params": decay, "weight_decay": 0.1},
    {"params": no_decay, "weight_decay": 0.0, "lr": 5e-3},
], lr=1e-2, betas=(0.9, 0.95))
print("groups", [len(g["params"]) for g in opt.param_groups], [g["lr"] for g in opt.param_groups])
warm = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 5))
cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=20, eta_min=1e-4)
sched = torch.optim.lr_scheduler.SequentialLR(opt, schedulers=[warm, cos], milestones=[5])
X = torch.randn(128, 8)
y = (X[:, :1] * 2 - X[:, 1:2]).tanh()
for step in range(25):
    loss = nn.functional.mse_loss(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if step % 6 == 0:
        lrs = ", ".join(f"{lr:.5f}" for lr in sched.get_last_lr())
        print(f"step {step:2d} loss {loss.item():.5f} lr [{lrs}]")
state = opt.state_dict()
print("state keys", sorted(state.keys()), "n states", len(state["state"]))
print("step count", int(state["state"][0]["step"]))
opt2 = torch.optim.AdamW(model.parameters(), lr=1.0)
opt3 = torch.optim.AdamW([{"params": decay}, {"params": no_decay}], lr=1.0)
opt3.load_state_dict(state)
print("restored lr", [round(g["lr"], 6) for g in opt3.param_groups])
oc_opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
oc = torch.optim.lr_scheduler.OneCycleLR(oc_opt, max_lr=0.5, total_steps=10)
lrs = []
for _ in range(10):
    oc_opt.step()
    lrs.append(oc.get_last_lr()[0])
    oc.step()
print("one cycle", [f"{v:.4f}" for v in lrs])
print("momentum now", oc_opt.param_groups[0]["momentum"])
