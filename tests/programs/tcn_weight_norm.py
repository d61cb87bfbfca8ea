# A temporal convolutional network: dilated causal Conv1d with left padding, weight_norm parametrizations,
# residual 1x1 convs, gradient clipping by norm, and an MSE forecasting loss with a OneCycleLR schedule.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.parametrizations import weight_norm


class Block(nn.Module):
    def __init__(self, cin, cout, dilation):
        super().__init__()
        self.pad = 2 * dilation
        self.conv = weight_norm(nn.Conv1d(cin, cout, 3, dilation=dilation))
        self.down = nn.Conv1d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        y = self.conv(F.pad(x, (self.pad, 0)))
        return F.relu(y) + self.down(x)


model = nn.Sequential(Block(1, 8, 1), Block(8, 8, 2), Block(8, 8, 4), nn.Conv1d(8, 1, 1))
t = torch.linspace(0, 12, 96)
series = torch.sin(t) + 0.1 * torch.randn(96)
x = series[:-1].reshape(1, 1, -1)
y = series[1:].reshape(1, 1, -1)
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=30)
names = [n for n, _ in model.named_parameters()]
print(len(names), names[:3])
for step in range(30):
    pred = model(x)
    loss = F.mse_loss(pred, y)
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 10 == 0:
        print(f"step {step} mse {loss.item():.4f} norm {norm.item():.3f} lr {sched.get_last_lr()[0]:.5f}")
print("out", tuple(pred.shape), "receptive", 1 + 2 * (1 + 2 + 4))
