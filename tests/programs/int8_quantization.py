# Post-training int8 quantization written by hand: per-channel symmetric weight scales from amax,
# torch.iinfo(torch.int8) bounds, round().clamp().to(torch.int8), per-tensor asymmetric activation
# quantization with a zero point calibrated on a few batches, an integer matmul accumulated in int32,
# requantisation with the combined scale, a fake-quant forward for comparison, and accuracy / error reports.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(512, 16)
y = (X[:, :4].sum(1) > X[:, 4:8].sum(1)).long() + (X[:, 8] > 1).long()
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
for epoch in range(60):
    loss = F.cross_entropy(model(X), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
with torch.no_grad():
    ref = model(X)
print(f"float model loss {loss.item():.4f} acc {(ref.argmax(1) == y).float().mean():.3f}")

qmin, qmax = torch.iinfo(torch.int8).min, torch.iinfo(torch.int8).max
print("int8 range", qmin, qmax, "uint8 range", torch.iinfo(torch.uint8).min, torch.iinfo(torch.uint8).max)


def quantize_weight(w):
    scale = w.abs().amax(dim=1, keepdim=True) / qmax
    q = torch.round(w / scale).clamp(qmin, qmax).to(torch.int8)
    return q, scale


def calibrate(x):
    lo, hi = x.min().clamp(max=0), x.max().clamp(min=0)
    scale = (hi - lo) / 255
    zero_point = (-128 - torch.round(lo / scale)).to(torch.int32)
    return scale, zero_point


def quantize_act(x, scale, zp):
    return (torch.round(x / scale) + zp).clamp(-128, 127).to(torch.int8)


@torch.no_grad()
def int_linear(xq, x_scale, x_zp, wq, w_scale, bias):
    acc = (xq.to(torch.int32) - x_zp) @ wq.to(torch.int32).t()
    return acc.to(torch.float32) * (x_scale * w_scale.t()) + bias


l1, l2 = model[0], model[2]
w1q, s1 = quantize_weight(l1.weight)
w2q, s2 = quantize_weight(l2.weight)
print("quantized dtypes", w1q.dtype, s1.dtype, tuple(w1q.shape), f"bytes {w1q.element_size() * w1q.nelement()}")
with torch.no_grad():
    xs, xz = calibrate(X[:128])
    h = F.relu(l1(X[:128]))
    hs, hz = calibrate(h)
print(f"input scale {xs.item():.5f} zero point {xz.item()} hidden scale {hs.item():.5f} zero point {hz.item()}")

with torch.no_grad():
    xq = quantize_act(X, xs, xz)
    h = F.relu(int_linear(xq, xs, xz, w1q, s1, l1.bias))
    hq = quantize_act(h, hs, hz)
    out = int_linear(hq, hs, hz, w2q, s2, l2.bias)
    fake = F.linear(F.relu(F.linear(X, w1q.float() * s1, l1.bias)), w2q.float() * s2, l2.bias)
print(f"int8 acc {(out.argmax(1) == y).float().mean():.3f} agreement with float {(out.argmax(1) == ref.argmax(1)).float().mean():.3f}")
print(f"max |int8 - float| {(out - ref).abs().max():.4f} weight-only fake-quant max err {(fake - ref).abs().max():.4f}")
err = (l1.weight - w1q.float() * s1).abs()
print(f"weight rounding error max {err.max():.5f} <= half step {(s1 / 2).max():.5f}: {bool((err <= s1 / 2 + 1e-7).all())}")
print("histogram of int8 weights", torch.histc(w1q.float(), bins=8, min=-128, max=127).long().tolist())
