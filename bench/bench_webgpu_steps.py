"""Runtime counters per training step on ``device="webgpu"``: dispatches, submits, bytes uploaded, read-backs
and host time per dispatch, for an MLP, a LeNet-style CNN and a 2-layer GPT (each: forward, loss, backward,
optimizer step). The counters are those of ``shapetorch.memory_stats()``, taken over the step after ``--warmup``
steps (the first ones compile pipelines, create the optimizer state and the bind groups); the host time is the
median (and the minimum) over the next ``--repeat`` steps (each recorded without a wait, then synchronized outside
the timing). ``--per-op`` also lists where the
third step's dispatches go, by primitive ("(none)": the runtime's own, such as fills, range checks and the
held-back optimizer step).

``--clock cpu`` times the host with the recording thread's CPU time (``time.thread_time``) instead of the wall
clock: on a loaded machine, or on lavapipe, whose worker threads run the submitted kernels on the same CPUs, the
wall clock counts time the host spent waiting for a core.

Each step is also captured once in a ``st.webgpu.Graph`` and replayed (the "replayed" rows, ``--no-replay`` skips
them; Adam and AdamW ``capturable=True``): the same counters for one replay, and its host time per dispatch.

The "compiled" rows (``--no-compiled`` skips them) are the step as a torch user writes it for CUDA graphs:
``st.compile(model, mode="reduce-overhead")`` and ``st.compile(opt.step, mode="reduce-overhead")`` (Adam and AdamW
``capturable=True``), the loss and its backward eager between them; the counters and host time of one step after
``max(3, --warmup)`` steps (the first of each compiled callable runs eagerly, the second captures its graphs). The
"step compiled" rows compile the whole step (zero_grad, forward, loss, backward, opt.step) as one function instead.

Run: ``python -m bench.bench_webgpu_steps [--json PATH] [--per-op] [--repeat N] [--warmup N] [--clock wall|cpu]
[--no-replay] [--no-compiled]``.
Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
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
    """(name, model factory, optimizer factory (its second argument: ``capturable``), inputs, targets)."""
    rng = np.random.default_rng(0)
    mlp = ("MLP 784-256-10 SGD", lambda: st.nn.Sequential(st.nn.Linear(784, 256), st.nn.ReLU(), st.nn.Linear(256, 10)),
           lambda p, cap=False: st.optim.SGD(p, lr=0.1, momentum=0.9), rng.normal(size=(64, 784)).astype(np.float32),
           rng.integers(0, 10, 64))
    lenet = ("LeNet 1x28x28 Adam", lambda: st.nn.Sequential(
        st.nn.Conv2d(1, 6, 5, padding=2), st.nn.ReLU(), st.nn.MaxPool2d(2), st.nn.Conv2d(6, 16, 5), st.nn.ReLU(),
        st.nn.MaxPool2d(2), st.nn.Flatten(), st.nn.Linear(400, 120), st.nn.ReLU(), st.nn.Linear(120, 10)),
        lambda p, cap=False: st.optim.Adam(p, lr=1e-3, capturable=cap), rng.normal(size=(8, 1, 28, 28)).astype(np.float32),
        rng.integers(0, 10, 8))
    gpt = ("GPT 2x32, ctx 16 AdamW", GPT, lambda p, cap=False: st.optim.AdamW(p, lr=1e-3, capturable=cap),
           rng.integers(0, 64, (4, 16)), rng.integers(0, 64, (4, 16)))
    return [mlp, lenet, gpt]


class PerOp:
    """Counts the dispatches recorded while on, by the primitive whose kernel records them."""

    def __init__(self) -> None:
        from shapetorch.backends.webgpu.runtime import RT

        self.rt, self.on, self.counts = RT, False, Counter[str]()
        self.dispatch = RT.dispatch

        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.on:
                self.counts["(none)" if RT.op == "webgpu" else RT.op] += 1
            return self.dispatch(*args, **kwargs)

        RT.dispatch = counted  # type: ignore[method-assign]

    def close(self) -> None:
        self.rt.dispatch = self.dispatch  # type: ignore[method-assign]


def measure(name: str, make: Callable[[], Any], make_opt: Callable[[Any], Any], xs: Any, ys: Any,
            per_op: PerOp | None = None, repeat: int = 5, clock: Callable[[], float] = time.perf_counter,
            warmup: int = 2) -> dict[str, Any]:
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

    return _count_and_time(step, repeat, clock, warmup, per_op)


def measure_replay(make: Callable[[], Any], make_opt: Callable[..., Any], xs: Any, ys: Any, repeat: int = 5,
                   clock: Callable[[], float] = time.perf_counter, warmup: int = 2) -> dict[str, Any]:
    """The same step captured once in a ``st.webgpu.Graph`` (the optimizer ``capturable``) after ``warmup`` eager
    steps, then replayed: the counters of one replay and its host time (the median over ``repeat`` replays, each
    timed as the eager step is, up to ``memory_stats()``)."""
    st.manual_seed(0)
    model = make().to("webgpu")
    opt = make_opt(model.parameters(), True)
    x, y = st.tensor(xs, device="webgpu"), st.tensor(ys, device="webgpu")

    def step() -> Any:
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    for _ in range(warmup):
        opt.zero_grad()
        step()
        st.synchronize()
    g = st.webgpu.Graph()
    opt.zero_grad(set_to_none=True)
    with st.webgpu.graph(g):
        loss = step()
    row = _count_and_time(g.replay, repeat, clock, 1)
    row["loss"] = float(loss.item())
    return row


def measure_compiled(make: Callable[[], Any], make_opt: Callable[..., Any], xs: Any, ys: Any, repeat: int = 5,
                     clock: Callable[[], float] = time.perf_counter, warmup: int = 3,
                     whole: bool = False) -> dict[str, Any]:
    """The step with the model and the optimizer's step compiled with ``mode="reduce-overhead"`` (``whole``: the
    whole step, zero_grad to opt.step, compiled as one function), counted and timed as ``measure``'s eager step."""
    st.manual_seed(0)
    model = make().to("webgpu")
    opt = make_opt(model.parameters(), True)
    x, y = st.tensor(xs, device="webgpu"), st.tensor(ys, device="webgpu")
    forward = model if whole else st.compile(model, mode="reduce-overhead")
    opt_step = opt.step if whole else st.compile(opt.step, mode="reduce-overhead")

    def train_step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = forward(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        loss.backward()
        opt_step()
        return loss

    run = st.compile(train_step, mode="reduce-overhead") if whole else train_step
    return _count_and_time(lambda: run(x, y), repeat, clock, max(3, warmup))


def _count_and_time(step: Callable[[], Any], repeat: int, clock: Callable[[], float], warmup: int,
                    per_op: PerOp | None = None) -> dict[str, Any]:
    """The counters of one ``step`` after ``warmup`` ones (its dispatches by primitive with ``per_op``), and its
    host time per dispatch: the median and minimum over ``repeat`` more, each up to ``memory_stats()``, which
    records the held-back optimizer step."""
    for _ in range(warmup):
        step()
        st.synchronize()
    before = st.memory_stats()
    if per_op is not None:
        per_op.counts.clear()
        per_op.on = True
    loss = step()
    after = st.memory_stats()
    if per_op is not None:
        per_op.on = False
    row: dict[str, Any] = {k.removeprefix("num_"): after[k] - before[k] for k in COUNTERS}
    if loss is not None:
        row["loss"] = float(loss.item())
    times = []
    for _ in range(repeat):
        st.synchronize()
        t0 = clock()
        step()
        st.memory_stats()
        times.append(clock() - t0)
    host = float(np.median(times))
    row["host_us_per_dispatch"] = 1e6 * host / max(1, row["dispatches"])
    row["host_us_per_dispatch_min"] = 1e6 * min(times) / max(1, row["dispatches"])
    row["host_ms"] = 1e3 * host
    if per_op is not None:
        row["per_op"] = dict(per_op.counts.most_common())
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    ap.add_argument("--per-op", action="store_true", help="list each step's dispatches by primitive")
    ap.add_argument("--repeat", type=int, default=5, help="steps timed for the host time (their median)")
    ap.add_argument("--warmup", type=int, default=2,
                    help="steps before the counted one (a loop reuses all its bind groups after about 10)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="host time by the wall clock or by the recording thread's CPU time")
    ap.add_argument("--no-replay", action="store_true",
                    help="skip the replayed rows (each step also captured in a st.webgpu.Graph and replayed)")
    ap.add_argument("--no-compiled", action="store_true",
                    help="skip the compiled rows (the model and opt.step compiled with mode='reduce-overhead')")
    args = ap.parse_args()
    clock = time.thread_time if args.clock == "cpu" else time.perf_counter
    if not st.is_webgpu_available():
        from shapetorch.backends.webgpu.api import unavailable_reason

        print(f"WebGPU is not available: {unavailable_reason()}")
        return 0
    results = {}
    print(f"{'step':26s} {'dispatches':>10s} {'submits':>8s} {'uploaded':>10s} {'readbacks':>9s} {'host/disp':>10s} "
          f"{'(min)':>8s}")
    per_op = PerOp() if args.per_op else None
    for name, make, make_opt, xs, ys in models():
        r = results[name] = measure(name, make, make_opt, xs, ys, per_op, max(1, args.repeat), clock,
                                        max(1, args.warmup))
        print(f"{name:26s} {r['dispatches']:10d} {r['submits']:8d} {r['bytes_uploaded']:10d} {r['readbacks']:9d} "
              f"{r['host_us_per_dispatch']:8.1f}us {r['host_us_per_dispatch_min']:6.1f}us")
        if per_op is not None:
            print("    " + ", ".join(f"{op} {n}" for op, n in r["per_op"].items()))
        if not args.no_replay:
            r = results[name + " (replayed)"] = measure_replay(make, make_opt, xs, ys, max(1, args.repeat), clock,
                                                               max(1, args.warmup))
            print(f"{'  replayed':26s} {r['dispatches']:10d} {r['submits']:8d} {r['bytes_uploaded']:10d} "
                  f"{r['readbacks']:9d} {r['host_us_per_dispatch']:8.1f}us {r['host_us_per_dispatch_min']:6.1f}us")
        for label, whole in (("compiled", False), ("step compiled", True)) if not args.no_compiled else ():
            r = results[f"{name} ({label})"] = measure_compiled(make, make_opt, xs, ys, max(1, args.repeat), clock,
                                                                max(3, args.warmup), whole)
            print(f"{'  ' + label:26s} {r['dispatches']:10d} {r['submits']:8d} {r['bytes_uploaded']:10d} "
                  f"{r['readbacks']:9d} {r['host_us_per_dispatch']:8.1f}us {r['host_us_per_dispatch_min']:6.1f}us")
    if per_op is not None:
        per_op.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
