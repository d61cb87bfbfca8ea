"""Training-step benchmark: shapetorch vs torch (CPU), as ratios (shapetorch time / torch time).

    python bench/bench_training.py [--quick]     (``python -m bench`` calls ``workloads``/``stepper`` too)

A step is forward, loss, backward, optimizer step, built from each library's own ``nn`` and ``optim``
with identical weights (torch's initial values copied into shapetorch's parameters) and identical data.
Before timing, the first step's loss is compared with torch's, so that a broken step cannot look fast.
The workloads:

- an MLP 784-512-512-10 (``nn.Linear``, ReLU), batch 256, SGD with momentum;
- a small CNN (two conv + max-pool + linear) on 1x28x28, batch 64, SGD with momentum;
- LeNet-5 on 1x28x28, batch 64, SGD with momentum;
- two ResNet basic blocks (conv-BatchNorm-ReLU, with the identity shortcut) on 16x16x16, batch 32, SGD;
- a 2-layer nanoGPT (d=128, 4 heads, T=64, vocabulary 65, batch 8), AdamW, once with hand-written
  causal attention (matmul, masked_fill, softmax) and once with ``scaled_dot_product_attention``;
- a character-level sequence model (embedding 64, a 2-layer LSTM or GRU of 128 units, a linear head at every
  step; T=32, vocabulary 65, batch 16), AdamW.

The table also has the tiny-op and large-op cases of ``bench_ops`` and the autograd graphs of
``bench_autograd``, each timed interleaved with torch, and the tracemalloc peak of one step (Python and
NumPy allocations; torch's allocator is invisible to tracemalloc, so its peak is measured as the growth
of the process's peak RSS in ``python -m bench``'s memory section instead).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import shapetorch as st
from bench._timing import compare, fmt_time


def mlp(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Linear(784, 512), lib.nn.ReLU(), lib.nn.Linear(512, 512), lib.nn.ReLU(),
                             lib.nn.Linear(512, 10))


def cnn(lib: Any) -> Any:
    return lib.nn.Sequential(lib.nn.Conv2d(1, 16, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                             lib.nn.Conv2d(16, 32, 3, padding=1), lib.nn.ReLU(), lib.nn.MaxPool2d(2),
                             lib.nn.Flatten(), lib.nn.Linear(32 * 7 * 7, 10))


def lenet(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.ReLU(), nn.Linear(120, 84),
                         nn.ReLU(), nn.Linear(84, 10))


def resnet(lib: Any) -> Any:
    nn = lib.nn

    class BasicBlock(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self, c: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(c)
            self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(c)

        def forward(self, x: Any) -> Any:
            h = self.bn1(self.conv1(x)).relu()
            return (self.bn2(self.conv2(h)) + x).relu()

    class Net(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.Sequential(BasicBlock(16), BasicBlock(16))
            self.head = nn.Linear(16, 10)

        def forward(self, x: Any) -> Any:
            return self.head(self.blocks(x).mean((2, 3)))

    return Net()


GPT_T, GPT_V, GPT_D, GPT_H = 64, 65, 128, 4


def gpt(lib: Any, sdpa: bool) -> Any:
    """nanoGPT's model (pre-norm blocks, GELU MLP, learned positions), two layers."""
    nn = lib.nn
    F = nn.functional
    T, V, D, H = GPT_T, GPT_V, GPT_D, GPT_H

    class Attention(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.register_buffer("mask", lib.tril(lib.ones(T, T)).view(1, 1, T, T))

        def forward(self, x: Any) -> Any:
            B, T_, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T_, H, C // H).transpose(1, 2) for t in (q, k, v))
            if sdpa:
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // H))
                att = att.masked_fill(self.mask[:, :, :T_, :T_] == 0, float("-inf"))
                y = F.softmax(att, dim=-1) @ v
            return self.proj(y.transpose(1, 2).contiguous().view(B, T_, C))

    class Block(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.ln1 = nn.LayerNorm(D)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(D)
            self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(V, D)
            self.wpe = nn.Embedding(T, D)
            self.blocks = nn.Sequential(Block(), Block())
            self.ln_f = nn.LayerNorm(D)
            self.head = nn.Linear(D, V, bias=False)
            self.register_buffer("pos", lib.arange(T))

        def forward(self, idx: Any) -> Any:
            T_ = idx.shape[1]
            x = self.wte(idx) + self.wpe(self.pos[:T_])
            return self.head(self.ln_f(self.blocks(x)))

    return GPT()


SEQ_T, SEQ_E, SEQ_H = 32, 64, 128


def seq_model(lib: Any, cell: str) -> Any:
    """A character-level sequence model: embedding, a 2-layer LSTM or GRU (batch first), a linear head per step."""
    nn = lib.nn

    class Net(nn.Module):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(GPT_V, SEQ_E)
            self.rnn = getattr(nn, cell)(SEQ_E, SEQ_H, num_layers=2, batch_first=True)
            self.head = nn.Linear(SEQ_H, GPT_V)

        def forward(self, idx: Any) -> Any:
            h, _ = self.rnn(self.emb(idx))
            return self.head(h)

    return Net()


def sgd(lib: Any, params: Any) -> Any:
    return lib.optim.SGD(params, lr=0.01, momentum=0.9)


def adamw(lib: Any, params: Any) -> Any:
    return lib.optim.AdamW(params, lr=1e-3, weight_decay=0.1)


Workload = tuple[str, Callable[[Any], Any], np.ndarray, np.ndarray]
OPTIMIZERS: dict[str, Callable[[Any, Any], Any]] = {}


def workloads() -> list[Workload]:
    """(name, model factory, inputs, targets); the optimizer of each is ``OPTIMIZERS[name]`` (SGD by default).

    Slicing the inputs and the targets along their first axis gives a smaller batch of the same workload.
    """
    rng = np.random.default_rng(0)
    gpt_x = rng.integers(0, GPT_V, (8, GPT_T))
    gpt_y = rng.integers(0, GPT_V, (8, GPT_T))
    seq_x = rng.integers(0, GPT_V, (16, SEQ_T))
    seq_y = rng.integers(0, GPT_V, (16, SEQ_T))
    out: list[Workload] = [
        ("MLP 784-512-512-10, batch 256", mlp, rng.normal(size=(256, 784)).astype(np.float32),
         rng.integers(0, 10, 256)),
        ("CNN 1x28x28, batch 64", cnn, rng.normal(size=(64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64)),
        ("LeNet-5 1x28x28, batch 64", lenet, rng.normal(size=(64, 1, 28, 28)).astype(np.float32),
         rng.integers(0, 10, 64)),
        ("ResNet 2 basic blocks+BN, 16x16x16, batch 32", resnet,
         rng.normal(size=(32, 16, 16, 16)).astype(np.float32), rng.integers(0, 10, 32)),
        ("nanoGPT 2x128 T=64, hand attention, AdamW", lambda lib: gpt(lib, False), gpt_x, gpt_y),
        ("nanoGPT 2x128 T=64, sdpa, AdamW", lambda lib: gpt(lib, True), gpt_x, gpt_y),
        ("LSTM 2x128 T=32, batch 16, AdamW", lambda lib: seq_model(lib, "LSTM"), seq_x, seq_y),
        ("GRU 2x128 T=32, batch 16, AdamW", lambda lib: seq_model(lib, "GRU"), seq_x, seq_y),
    ]
    for name, *_ in out:
        OPTIMIZERS[name] = adamw if name.startswith(("nanoGPT", "LSTM", "GRU")) else sgd
    return out


def _models(make: Callable[[Any], Any]) -> tuple[Any, Any]:
    """The same model in both libraries: torch's initial weights and buffers copied into shapetorch's."""
    torch.manual_seed(0)
    tm = make(torch)
    sm = make(st)
    state = {k: st.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    sm.load_state_dict(state)
    return sm, tm


def stepper(lib: Any, make: Callable[[Any], Any], x: np.ndarray, y: np.ndarray, model: Any = None,
            name: str | None = None) -> Callable[[], Any]:
    """One training step of ``make(lib)`` (or of ``model``) on ``(x, y)``; returns the loss tensor."""
    if model is None:
        model = make(lib)
    opt = OPTIMIZERS.get(name or "", sgd)(lib, model.parameters())
    xb, yb = lib.tensor(x), lib.tensor(y)
    ce = lib.nn.functional.cross_entropy

    def step() -> Any:
        opt.zero_grad()
        out = model(xb)  # (N, classes), or (B, T, vocabulary) for the language model
        loss = ce(out.reshape(-1, out.shape[-1]), yb.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    return step


def steppers(name: str, make: Callable[[Any], Any], x: np.ndarray, y: np.ndarray) -> tuple[Any, Any]:
    """Both libraries' steps from identical weights, after checking that their first losses agree."""
    sm, tm = _models(make)
    s, t = stepper(st, make, x, y, sm, name), stepper(torch, make, x, y, tm, name)
    ls, lt = float(s().item()), float(t().item())
    if not math.isclose(ls, lt, rel_tol=1e-4, abs_tol=1e-5):
        raise AssertionError(f"{name}: first-step loss {ls} differs from torch's {lt}")
    return s, t


def peak(step: Callable[[], Any]) -> int:
    step()
    tracemalloc.start()
    step()
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top


# Where a profile's own time goes: the first group whose key is in a function's "file:function" label.
PROFILE_GROUPS = (
    ("matmul.py:", "GEMMs (matmul kernels)"),
    ("thread_pool.py:matmul", "GEMMs (matmul kernels)"),
    ("attention.py:", "fused attention"),
    ("activation.py:", "GELU, softmax, layer norm kernels"),
    ("recurrent.py:", "LSTM/GRU gate kernels"),
    ("loss.py:", "cross entropy"),
    ("thread_pool.py:", "other elementwise kernels and reductions"),
    ("method 'reduce'", "other elementwise kernels and reductions"),
    ("numpy", "other elementwise kernels and reductions"),
    ("_engine/backward.py:", "backward walk and gradient accumulation"),
    ("_engine/primitives.py:", "primitive calls (wrap, record a node)"),
    ("numpy_backend.py:", "optimizer step"),
    ("optim/", "optimizer step"),
)


def profile(name: str, step: Callable[[], Any], steps: int = 5, top: int = 25,
            clock: Callable[[], float] | None = None) -> None:
    """cProfile of ``steps`` steps after three warm-up steps: the time of each function's own code, grouped
    (``PROFILE_GROUPS``; the rest is the Python of the public ops, the modules and the rules), then the
    functions with the most. ``clock`` replaces cProfile's wall clock (``time.process_time``: the time other
    jobs of a loaded machine take is not counted)."""
    import cProfile
    import pstats

    for _ in range(3):
        step()
    prof = cProfile.Profile() if clock is None else cProfile.Profile(clock)
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    stats = pstats.Stats(prof)
    groups: dict[str, float] = {}
    total = 0.0
    for (path, _line, fn), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        label = f"{path.replace(os.sep, '/')}:{fn}"
        group = next((g for key, g in PROFILE_GROUPS if key in label), "dispatch: public ops, modules, rules")
        groups[group] = groups.get(group, 0.0) + tt
        total += tt
    print(f"== {name}: {steps} steps, {total / steps * 1e3:.1f} ms a step under the profiler")
    for group, t in sorted(groups.items(), key=lambda kv: -kv[1]):
        print(f"  {t / total:6.1%}  {group}")
    stats.sort_stats("tottime").print_stats(top)


def mlp_gemm_floor(x: np.ndarray, repeat: int = 15) -> None:
    """The MLP step against its GEMM floor: the step's eight products alone (three forward; two weight gradients
    and one input gradient per layer but the first, whose input needs none), in NumPy and in torch on the same
    shapes and layouts, timed with both steps in interleaved rounds (CPU time, best round and median)."""
    name, make, _, y = next(w for w in workloads() if w[0].startswith("MLP"))
    s, t = steppers(name, make, x, y)
    rng = np.random.default_rng(1)

    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(np.float32)

    arrays = (x, r(512, 784), r(512, 512), r(10, 512), r(256, 512), r(256, 512), r(256, 10))

    def gemms(lib: Any, a: tuple[Any, ...]) -> Callable[[], None]:
        xx, w1, w2, w3, h1, h2, g3 = a

        def run() -> None:
            xx @ w1.T, h1 @ w2.T, h2 @ w3.T  # forward
            g2 = g3 @ w3
            g3.T @ h2, g2.T @ h1, (g2 @ w2).T @ xx  # weight gradients (and the second layer's input gradient)
        return run

    fns = {"shapetorch step": s, "torch step": t, "NumPy GEMMs": gemms(np, arrays),
           "torch GEMMs": gemms(torch, tuple(torch.from_numpy(a) for a in arrays))}
    got: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.process_time()
            for _ in range(5):
                f()
            got[k].append((time.process_time() - t0) / 5)
    floor = min(got["NumPy GEMMs"])
    print(f"{'':18} {'best':>10} {'median':>10} {'best / NumPy GEMMs':>20}")
    for k, v in got.items():
        print(f"{k:18} {fmt_time(min(v)):>10} {fmt_time(statistics.median(v)):>10} {min(v) / floor:20.2f}")


GOALS = {"training": 1.0, "tiny": 1.0, "tiny+backward": 1.0, "large": 1.2}


def run(quick: bool = False, sections: tuple[str, ...] = ("training", "tiny", "tiny+backward", "large"),
        only: str | None = None, clock: Callable[[], float] | None = None) -> list[dict[str, Any]]:
    """One row per case: seconds per call (shapetorch, torch), measured in interleaved rounds."""
    from bench import bench_autograd, bench_ops

    repeat = 5 if quick else 9
    cases: list[tuple[str, str, Callable[[], Any], Callable[[], Any]]] = []
    if "training" in sections:
        for name, make, x, y in workloads():
            if only is None or only.lower() in name.lower():
                s, t = steppers(name, make, x, y)
                cases.append(("training", name, s, t))
    if "tiny" in sections:
        cases += [("tiny", n, o, t) for n, o, t, _ in bench_ops.tiny_cases()]
    if "tiny+backward" in sections:
        cases += [("tiny+backward", n, o, t) for n, o, t, _ in bench_ops.tiny_backward_cases()]
        cases += [("tiny+backward", n, o, t) for n, o, t, *_ in bench_autograd.cases()]
    if "large" in sections:
        cases += [("large", n, o, t) for n, o, t, _ in bench_ops.large_cases(quick)]
    rows = []
    for section, name, s, t in cases:
        got = compare({"shapetorch": s, "torch": t}, 0.05 if quick else 0.2, repeat,
                      **({} if clock is None else {"clock": clock}))
        r = {"section": section, "case": name, "shapetorch_s": got["shapetorch"], "torch_s": got["torch"]}
        if section == "training":
            r["shapetorch_peak_bytes"] = peak(s)
        rows.append(r)
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", help="training workloads whose name contains this text")
    p.add_argument("--sections", default="training,tiny,tiny+backward,large")
    p.add_argument("--threads", type=int, default=st.get_num_threads(),
                   help="torch's and shapetorch's intra-op threads, by default shapetorch's default (torch's: "
                        "the physical cores); give NumPy's BLAS the same with OPENBLAS_NUM_THREADS")
    p.add_argument("--profile", action="store_true",
                   help="instead of timing, profile the shapetorch steps of the training workloads (cProfile)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="cpu: time by the process's CPU time (with one thread, steadier on a shared machine)")
    p.add_argument("--gemm-floor", action="store_true",
                   help="instead of the table, the MLP step against its eight GEMMs alone (CPU time)")
    a = p.parse_args(argv)
    torch.set_num_threads(max(1, a.threads))
    st.set_num_threads(max(1, a.threads))
    clock = time.process_time if a.clock == "cpu" else None
    if a.gemm_floor:
        mlp_gemm_floor(next(w for w in workloads() if w[0].startswith("MLP"))[2])
        return
    if a.profile:
        for name, make, x, y in workloads():
            if a.only is None or a.only.lower() in name.lower():
                profile(name, steppers(name, make, x, y)[0], clock=clock)
        return
    print(f"torch threads {torch.get_num_threads()}; ratio = shapetorch / torch (best of interleaved rounds)")
    print(f"{'case':46} {'shapetorch':>12} {'torch':>12} {'ratio':>7} {'goal':>6} {'st peak MiB':>12}")
    for r in run(a.quick, tuple(a.sections.split(",")), a.only, clock):
        ts, tt = r["shapetorch_s"], r["torch_s"]
        mem = f"{r['shapetorch_peak_bytes'] / 2**20:12.1f}" if "shapetorch_peak_bytes" in r else ""
        print(f"{r['case'][:46]:46} {fmt_time(ts):>12} {fmt_time(tt):>12} {ts / tt:7.2f} "
              f"{GOALS[r['section']]:6.1f} {mem}", flush=True)


if __name__ == "__main__":
    main()
