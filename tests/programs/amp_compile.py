# What recent training scripts wrap around the loop: torch.autocast on the CPU with bfloat16,
# a GradScaler (a no-op when disabled), torch.compile (which must give the same numbers),
# set_float32_matmul_precision, and gradient accumulation with loss / accum_steps.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_float32_matmul_precision("high")
model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
compiled = torch.compile(model, backend="eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
scaler = torch.amp.GradScaler("cpu", enabled=False)

x = torch.randn(16, 10)
y = torch.randint(0, 4, (16,))
accum = 2
for step in range(4):
    for micro in range(accum):
        xb, yb = x[micro::accum], y[micro::accum]
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=False):
            logits = compiled(xb)
            loss = F.cross_entropy(logits, yb) / accum
        scaler.scale(loss).backward()
    scaler.unscale_(opt)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(opt)
    scaler.update()
    opt.zero_grad(set_to_none=True)
    print(f"step {step} loss {loss.item() * accum:.4f}")

with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
    out = model(x)
print("autocast dtype", out.dtype)
print("eval same", torch.allclose(compiled(x), model(x)))
