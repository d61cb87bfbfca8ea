# Gradient accumulation: loss /= accum_steps, clip_grad_norm_, an optimizer step every few batches,
# zero_grad(set_to_none=True), and a cosine schedule with warmup via LambdaLR.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 1))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.1)
warmup, total = 3, 12
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))
)
accum_steps = 4
xs = torch.randn(total * accum_steps, 8, 10)
ys = torch.randn(total * accum_steps, 8, 1)
optimizer.zero_grad(set_to_none=True)
for i, (x, y) in enumerate(zip(xs, ys)):
    loss = nn.functional.mse_loss(model(x), y)
    loss /= accum_steps
    loss.backward()
    if (i + 1) % accum_steps == 0:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"update {(i + 1) // accum_steps:2d} loss {loss.item() * accum_steps:.4f} "
              f"grad-norm {norm:.4f} lr {scheduler.get_last_lr()[0]:.6f}")
