# A neural ODE fitted to a damped spiral: an MLP vector field dy/dt = f(t, y), a fixed-step RK4 integrator
# written by hand (the loop autograd differentiates through), torch.linspace time grids, trajectory MSE
# with a RMSprop optimizer and an ExponentialLR schedule, and extrapolation past the training window.
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 32), nn.Softplus(), nn.Linear(32, 2))

    def forward(self, t, y):
        tt = t.expand(y.shape[0], 1)
        return self.net(torch.cat([y, tt], dim=1))


def odeint_rk4(func, y0, t):
    ys = [y0]
    y = y0
    for i in range(len(t) - 1):
        h = t[i + 1] - t[i]
        t0 = t[i:i + 1]
        k1 = func(t0, y)
        k2 = func(t0 + h / 2, y + h / 2 * k1)
        k3 = func(t0 + h / 2, y + h / 2 * k2)
        k4 = func(t0 + h, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]])
t = torch.linspace(0.0, 2.0, 21)
y0 = torch.tensor([[2.0, 0.0], [0.0, 1.5]])
with torch.no_grad():
    true = [y0]
    for i in range(20):
        true.append(true[-1] + (t[i + 1] - t[i]) * true[-1] @ A.T)
    true_y = torch.stack(true)
print("true final", true_y[-1])

torch.manual_seed(0)
func = ODEFunc()
opt = torch.optim.RMSprop(func.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.95)
for it in range(15):
    pred = odeint_rk4(func, y0, t)
    loss = torch.mean((pred - true_y) ** 2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    if it % 3 == 0:
        print(f"iter {it:2d} loss {loss.item():.5f} lr {sched.get_last_lr()[0]:.5f}")
with torch.no_grad():
    far = odeint_rk4(func, y0, torch.linspace(0.0, 3.0, 31))
print(f"extrapolated end {far[-1].tolist()}")
print(f"grad norm {torch.norm(torch.stack([p.grad.norm() for p in func.parameters()])):.5f}")
