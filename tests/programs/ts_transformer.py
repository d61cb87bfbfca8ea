# A time-series forecasting Transformer: sinusoidal positional encodings registered as a non-persistent
# buffer and a persistent one, a causal mask from nn.Transformer.generate_square_subsequent_mask,
# batch_first encoder layers, sliding windows via unfold, StepLR, and state_dict save/load round-trip.
import io
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0))
        self.register_buffer("scale", torch.tensor(math.sqrt(d_model)), persistent=False)

    def forward(self, x):
        return x * self.scale + self.pe[:, : x.size(1)]


class Forecaster(nn.Module):
    def __init__(self, d_model=16, nhead=2, layers=2):
        super().__init__()
        self.inp = nn.Linear(1, d_model)
        self.pos = PositionalEncoding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 1)

    def forward(self, x):
        T = x.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(T)
        h = self.encoder(self.pos(self.inp(x)), mask=mask, is_causal=True)
        return self.head(h)


t = torch.arange(0, 200, dtype=torch.float32)
series = torch.sin(t * 0.2) + 0.5 * torch.sin(t * 0.05) + 0.05 * torch.randn(200)
windows = series.unfold(0, 17, 4)                       # N, 17
x, y = windows[:, :-1].unsqueeze(-1), windows[:, 1:].unsqueeze(-1)
ds = TensorDataset(x, y)
train_ds, val_ds = random_split(ds, [36, 10])
train_loader = DataLoader(train_ds, batch_size=8, shuffle=True)
val_loader = DataLoader(val_ds, batch_size=10)

model = Forecaster()
print("buffers:", sorted(name for name, _ in model.named_buffers()))
print("state_dict has scale:", "pos.scale" in model.state_dict())
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
for epoch in range(8):
    model.train()
    running = 0.0
    for xb, yb in train_loader:
        opt.zero_grad()
        loss = F.mse_loss(model(xb), yb)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        running += loss.item()
    sched.step()
    model.eval()
    with torch.no_grad():
        val = sum(F.mse_loss(model(xb), yb).item() for xb, yb in val_loader)
    print(f"epoch {epoch} train {running / len(train_loader):.4f} val {val:.4f} lr {opt.param_groups[0]['lr']:.5f}")

buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
clone = Forecaster()
missing = clone.load_state_dict(torch.load(buf))
print("load result:", missing)
same_weights = all(torch.equal(a, b) for a, b in zip(clone.state_dict().values(), model.state_dict().values()))
print(f"weights identical {same_weights}")
clone.eval()
with torch.no_grad():
    same = torch.allclose(clone(x[:2]), model(x[:2]), atol=1e-5)
    # autoregressive rollout of 8 steps
    ctx = x[:1]
    preds = []
    for _ in range(8):
        nxt = clone(ctx)[:, -1:]
        preds.append(nxt.item())
        ctx = torch.cat([ctx[:, 1:], nxt], dim=1)
print(f"reloaded outputs close {same}")
print("rollout", [f"{p:.3f}" for p in preds])
