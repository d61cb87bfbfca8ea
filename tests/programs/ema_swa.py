# Weight averaging habits: an EMA copy via copy.deepcopy updated with lerp_/mul_().add_(alpha=),
# torch.optim.swa_utils.AveragedModel + SWALR + update_bn, and a CosineAnnealingWarmRestarts schedule.
import copy
import torch
import torch.nn as nn
from torch.optim.swa_utils import AveragedModel, SWALR, update_bn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 1))
ema = copy.deepcopy(model)
for p in ema.parameters():
    p.requires_grad_(False)
swa = AveragedModel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
sched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2)
swa_sched = SWALR(opt, swa_lr=0.05, anneal_epochs=2)
X = torch.randn(64, 4)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5], [0.0]]) + 0.1
loader = [(X[i : i + 16], Y[i : i + 16]) for i in range(0, 64, 16)]
for epoch in range(8):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item() * xb.shape[0]
        with torch.no_grad():
            for pe, pm in zip(ema.parameters(), model.parameters()):
                pe.mul_(0.9).add_(pm.detach(), alpha=0.1)
            for be, bm in zip(ema.buffers(), model.buffers()):
                be.copy_(bm)
    if epoch >= 5:
        swa.update_parameters(model)
        swa_sched.step()
    else:
        sched.step()
    print(f"epoch {epoch}: loss {total / 64:.4f} lr {opt.param_groups[0]['lr']:.4f}")
update_bn(loader, swa)
with torch.no_grad():
    ema.eval()
    swa.eval()
    model.eval()
    print("model", nn.functional.mse_loss(model(X), Y).item())
    print("ema", nn.functional.mse_loss(ema(X), Y).item())
    print("swa", nn.functional.mse_loss(swa(X), Y).item(), swa.n_averaged.item())
w = torch.zeros(3)
w.lerp_(torch.ones(3), 0.25)
print(w, torch.lerp(torch.zeros(2), torch.ones(2), torch.tensor([0.5, 0.1])))
