"""Runtime counters per training step on ``device="webgpu"``: dispatches, submits, bytes uploaded, read-backs
and host time per dispatch, for an MLP, a LeNet-style CNN and a 2-layer GPT (each: forward, loss, backward,
optimizer step). The counters are those of ``shapetorch.memory_stats()``; they are taken over the third step
(the first ones compile pipelines and create the optimizer state).

Run: ``python -m bench.bench_webgpu_steps [--json PATH]``. Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import shapetorch as st
import shapetorch.nn.functional as F

COUNTERS = ("num_dispatches", "num_submits", "num_bytes_uploaded", "num_readbacks")


class Block(st.nn.Module):
    """A pre-norm GPT block: causal self-attention and a GELU MLP, each with a residual."""

    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = st.nn.LayerNorm(d), st.nn.LayerNorm(d)
        self.qkv, self.proj = st.nn.Linear(d, 3 * d), st.nn.Linear(d, d)
        self.fc, self.out = st.nn.Linear(d, 4 * d), st.nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x: Any) -> Any:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(st.nn.Module):
    def __init__(self, vocab: int = 64, ctx: int = 16, d: int = 32, heads: int = 2, layers: int = 2) -> None:
        super().__init__()
        self.tok, self.pos = st.nn.Embedding(vocab, d), st.nn.Embedding(ctx, d)
        self.blocks = st.nn.Sequential(*(Block(d, heads) for _ in range(layers)))
        self.ln, self.head = st.nn.LayerNorm(d), st.nn.Linear(d, vocab)

    def forward(self, idx: Any) -> Any:
        pos = st.arange(idx.shape[1], device=idx.device)
        return self.head(self.ln(self.blocks(self.tok(idx) + self.pos(pos))))


def models() -> list[tuple[str, Callable[[], Any], Callable[[Any], Any], Any, Any]]:
    """(name, model factory, optimizer factory, inputs, targets)."""
    rng = np.random.default_rng(0)
    mlp = ("MLP 784-256-10 SGD", lambda: st.nn.Sequential(st.nn.Linear(784, 256), st.nn.ReLU(), st.nn.Linear(256, 10)),
           lambda p: st.optim.SGD(p, lr=0.1, momentum=0.9), rng.normal(size=(64, 784)).astype(np.float32),
           rng.integers(0, 10, 64))
    lenet = ("LeNet 1x28x28 Adam", lambda: st.nn.Sequential(
        st.nn.Conv2d(1, 6, 5, padding=2), st.nn.ReLU(), st.nn.MaxPool2d(2), st.nn.Conv2d(6, 16, 5), st.nn.ReLU(),
        st.nn.MaxPool2d(2), st.nn.Flatten(), st.nn.Linear(400, 120), st.nn.ReLU(), st.nn.Linear(120, 10)),
        lambda p: st.optim.Adam(p, lr=1e-3), rng.normal(size=(8, 1, 28, 28)).astype(np.float32),
        rng.integers(0, 10, 8))
    gpt = ("GPT 2x32, ctx 16 AdamW", GPT, lambda p: st.optim.AdamW(p, lr=1e-3),
           rng.integers(0, 64, (4, 16)), rng.integers(0, 64, (4, 16)))
    return [mlp, lenet, gpt]


def measure(name: str, make: Callable[[], Any], make_opt: Callable[[Any], Any], xs: Any, ys: Any) -> dict[str, Any]:
    st.manual_seed(0)
    model = make().to("webgpu")
    opt = make_opt(model.parameters())
    x, y = st.tensor(xs, device="webgpu"), st.tensor(ys, device="webgpu")

    def step() -> Any:
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    for _ in range(2):
        step()
    st.synchronize()
    before = st.memory_stats()
    t0 = time.perf_counter()
    loss = step()
    host = time.perf_counter() - t0
    after = st.memory_stats()
    row: dict[str, Any] = {k.removeprefix("num_"): after[k] - before[k] for k in COUNTERS}
    row["host_us_per_dispatch"] = 1e6 * host / max(1, row["dispatches"])
    row["host_ms"] = 1e3 * host
    row["loss"] = float(loss.item())
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    if not st.is_webgpu_available():
        from shapetorch.backends.webgpu.api import unavailable_reason

        print(f"WebGPU is not available: {unavailable_reason()}")
        return 0
    results = {}
    print(f"{'step':26s} {'dispatches':>10s} {'submits':>8s} {'uploaded':>10s} {'readbacks':>9s} {'host/disp':>10s}")
    for name, make, make_opt, xs, ys in models():
        r = results[name] = measure(name, make, make_opt, xs, ys)
        print(f"{name:26s} {r['dispatches']:10d} {r['submits']:8d} {r['bytes_uploaded']:10d} {r['readbacks']:9d} "
              f"{r['host_us_per_dispatch']:8.1f}us")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
