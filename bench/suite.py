"""The benchmark suite: every benchmark in one process, shapetorch against torch (CPU), NumPy and HIPS autograd.

    python -m bench [--quick] [--json PATH] [--plot PATH] [--markdown PATH] [--only SECTION ...] [--[no-]webgpu]

Sections (each reuses the standalone script named in brackets, which still runs on its own):

- tiny ops, forward [bench_ops] and forward+backward [bench_ops + HIPS autograd, bench_autograd]: the
  per-op overhead on 4x4 tensors;
- large ops [bench_ops]: throughput against NumPy (and torch);
- einsum [bench_einsum];
- training steps [bench_training + an MLP step written in HIPS autograd]: MLP and small CNN;
- peak memory of one training step: growth of the peak RSS in a fresh process per library, and the
  tracemalloc peak (which sees NumPy's allocations but not torch's);
- ``import shapetorch`` time, in fresh interpreters;
- the static checker [bench_typecheck]: mypy with and without the plugin, pyright;
- WebGPU [bench_webgpu], when an adapter is available: in full runs, or with ``--webgpu``.

Every result is a ratio ``shapetorch / peer`` (below 1: shapetorch is faster) with the target it is held
to, written as JSON (``--json``) and drawn (``--plot``, matplotlib). Tests never assert these numbers.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

# The targets (issue 17): ratio = shapetorch time / peer time, at most ``max``.
TARGETS: dict[str, dict[str, Any]] = {
    "tiny": {"peer": "torch", "max": 1.0, "what": "tiny ops (forward) at or below torch"},
    "tiny+backward": {"peer": "torch", "max": 1.0, "what": "tiny ops (forward+backward) at or below torch"},
    "large": {"peer": "torch", "max": 1.2, "what": "large ops within 1.2x of torch"},
    "training": {"peer": "torch", "max": 1.0, "what": "training steps at or below torch"},
    "import": {"peer": "seconds", "max": 0.3, "what": "import shapetorch under 0.3 s"},
    "import-first-op": {"peer": "seconds", "max": 0.5, "what": "import shapetorch and the first op under 0.5 s"},
    "typecheck": {"peer": "mypy", "max": 1.2, "what": "the plugin adds at most 20% to mypy's time"},
}


def row(section: str, case: str, ours: float, peers: dict[str, float | None], unit: str = "s",
        **extra: Any) -> dict[str, Any]:
    """One result: shapetorch's number, each peer's, the ratios, and the target this section is held to."""
    ratios = {k: ours / v for k, v in peers.items() if v}
    target = TARGETS.get(section)
    r: dict[str, Any] = {"section": section, "case": case, "unit": unit, "shapetorch": ours, "peers": peers,
                         "ratios": ratios}
    if target is not None:
        value = ours if target["peer"] == "seconds" else ratios.get(target["peer"])
        r["target"] = {"peer": target["peer"], "max": target["max"], "value": value,
                       "met": None if value is None else value <= target["max"]}
    r.update(extra)
    return r


# -- sections --------------------------------------------------------------------------------------


def _timed(section: str, case: str, fns: dict[str, Callable[[], Any] | None], quick: bool,
           min_time: float, **extra: Any) -> dict[str, Any]:
    """Time shapetorch (key "shapetorch") and its peers in interleaved rounds (``_timing.compare``)."""
    from ._timing import compare

    got = compare({k: f for k, f in fns.items() if f is not None}, min_time, repeat=5 if quick else 9)
    ours = got.pop("shapetorch")
    return row(section, case, ours, got, **extra)


def tiny(quick: bool) -> list[dict[str, Any]]:
    from . import bench_ops

    min_time = 0.05 if quick else 0.2
    rows = []
    for name, ours, theirs, np_fn in bench_ops.tiny_cases():
        rows.append(_timed("tiny", name, {"shapetorch": ours, "torch": theirs, "numpy": np_fn}, quick, min_time))
    hips = _autograd_tiny_backward()
    for name, ours, theirs, _ in bench_ops.tiny_backward_cases():
        rows.append(_timed("tiny+backward", name, {"shapetorch": ours, "torch": theirs, "autograd": hips}, quick,
                           min_time))
    try:  # bench_autograd's small graphs, where that script is present
        from . import bench_autograd
    except ImportError:
        return rows
    for name, ours, theirs, *_ in bench_autograd.cases():
        rows.append(_timed("tiny+backward", name, {"shapetorch": ours, "torch": theirs}, quick, min_time))
    return rows


def _autograd_tiny_backward() -> Callable[[], Any]:
    """bench_ops' forward+backward case, ``((a * b + a).exp() @ b).sum()``, in HIPS autograd."""
    import autograd.numpy as anp
    import numpy as np
    from autograd import grad

    rng = np.random.default_rng(0)
    params = (rng.random((4, 4), dtype=np.float32), rng.random((4, 4), dtype=np.float32))
    g = grad(lambda p: anp.sum(anp.dot(anp.exp(p[0] * p[1] + p[0]), p[1])))
    return lambda: g(params)


def large(quick: bool) -> list[dict[str, Any]]:
    from . import bench_ops

    return [_timed("large", name, {"shapetorch": ours, "numpy": np_fn, "torch": theirs}, quick, 0.1 if quick else 0.3)
            for name, ours, theirs, np_fn in bench_ops.large_cases(quick)]


def einsum(quick: bool) -> list[dict[str, Any]]:
    from . import bench_einsum

    return [row("einsum", r["case"], r["shapetorch_s"], {"torch": r["torch_s"], "numpy": r["numpy_s"]})
            for r in bench_einsum.run(number=5 if quick else 20)]


def training(quick: bool) -> list[dict[str, Any]]:
    """bench_training's workloads (and the MLP in HIPS autograd), timed in interleaved rounds."""


    from . import bench_training

    rows = []
    for name, make, x, y in bench_training.workloads():
        ours, theirs = bench_training.steppers(name, make, x, y)  # identical weights, first losses checked
        fns = {"shapetorch": ours, "torch": theirs,
               "autograd": _autograd_mlp_step() if name.startswith("MLP") else None}
        rows.append(_timed("training", name, fns, quick, 0.2, tracemalloc_peak_bytes=bench_training.peak(ours)))
    return rows


def _autograd_mlp_step() -> Callable[[], Any]:
    """bench_training's MLP step (784-512-512-10, batch 256, cross-entropy, SGD with momentum 0.9) in HIPS autograd."""
    import autograd.numpy as anp
    import numpy as np
    from autograd import grad

    _, _, x, y = next(w for w in __import__("bench.bench_training", fromlist=["workloads"]).workloads()
                      if w[0].startswith("MLP"))
    rng = np.random.default_rng(0)
    sizes = [784, 512, 512, 10]
    params = []
    for i, o in itertools.pairwise(sizes):
        bound = 1 / math.sqrt(i)
        params += [rng.uniform(-bound, bound, (i, o)).astype(np.float32), rng.uniform(-bound, bound, o).astype(np.float32)]
    momentum = [np.zeros_like(p) for p in params]
    onehot = np.eye(10, dtype=np.float32)[y]

    def loss(ps: list[Any]) -> Any:
        h = x
        for k in range(0, len(ps) - 2, 2):
            h = anp.maximum(anp.dot(h, ps[k]) + ps[k + 1], 0.0)
        logits = anp.dot(h, ps[-2]) + ps[-1]
        m = anp.max(logits, axis=1, keepdims=True)
        logp = logits - m - anp.log(anp.sum(anp.exp(logits - m), axis=1, keepdims=True))
        return -anp.mean(anp.sum(onehot * logp, axis=1))

    g = grad(loss)

    def step() -> None:
        for p, m, d in zip(params, momentum, g(params)):
            m *= 0.9
            m += d
            p -= 0.01 * m

    return step


_MEMORY_CHILD = """
import sys
sys.path.insert(0, {root!r})
from bench import bench_training
lib = __import__({lib!r})


def status(key):
    for line in open('/proc/self/status'):
        if line.startswith(key + ':'):
            return int(line.split()[1]) * 1024


name, make, x, y = bench_training.workloads()[{index}]
bench_training.stepper(lib, make, x[:2], y[:2], name=name)()  # loads what the first step loads lazily
step = bench_training.stepper(lib, make, x, y, name=name)
open('/proc/self/clear_refs', 'w').write('5')  # resets the peak (VmHWM) to the current RSS
rss = status('VmRSS')
step()
print(status('VmHWM') - rss)
"""


def memory(quick: bool) -> list[dict[str, Any]]:
    """Peak RSS growth over the first training step (weights made, lazy imports done by a 2-sample step before),
    in a fresh process per library."""
    if not Path("/proc/self/clear_refs").exists():
        return []
    from . import bench_training

    rows = []
    for index, (name, *_rest) in enumerate(bench_training.workloads()):
        got: dict[str, float] = {}
        for lib in ("shapetorch", "torch"):
            code = _MEMORY_CHILD.format(root=str(ROOT), lib=lib, index=index)
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
            got[lib] = max(1.0, float(out.stdout.split()[-1]))
        rows.append(row("memory", f"{name.split(',')[0]}: peak RSS growth, first step", got["shapetorch"],
                        {"torch": got["torch"]}, unit="bytes"))
    return rows


def import_time(quick: bool) -> list[dict[str, Any]]:
    """``import shapetorch`` (and the first op, which loads NumPy and the ops) against ``import torch``, each in a
    fresh interpreter, on the CPU clock (``time.process_time``: the load of other processes does not count); the
    median of several runs.

    The children run with a bytecode cache, as an installed package does (pip compiles the ``.pyc`` files) and
    as any Python run writes one: into a temporary ``PYTHONPYCACHEPREFIX``, filled by one run first, so the
    checkout is not written. Without it (``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__``) every run
    compiles shapetorch's sources again, which is most of the first op's time: the ``import-info`` row shows it."""
    import tempfile

    repeat = 3 if quick else 11

    def median_of(code: str, cached: bool = True) -> float:
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("PYTHONPYCACHEPREFIX", None)
        if cached:
            env["PYTHONPYCACHEPREFIX"] = cache
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        command = [sys.executable, "-c", f"import time; t = time.process_time(); {code}; "
                   "print(time.process_time() - t)"]
        if cached:
            subprocess.run(command, capture_output=True, text=True, check=True, env=env)  # fills the cache
        runs = []
        for _ in range(repeat):
            out = subprocess.run(command, capture_output=True, text=True, check=True, env=env)
            runs.append(float(out.stdout.split()[-1]))
        return statistics.median(runs)

    step = ("m = shapetorch.nn.Linear(4, 3); o = shapetorch.optim.SGD(m.parameters(), lr=0.1); "
            "shapetorch.nn.functional.mse_loss(m(shapetorch.randn(8, 4)), shapetorch.randn(8, 3)).backward(); o.step()")
    with tempfile.TemporaryDirectory() as cache:
        plain = median_of("import shapetorch")
        first_op = median_of("import shapetorch; shapetorch.ones(1)")
        first_step = median_of(f"import shapetorch; {step}")
        uncached = median_of("import shapetorch; shapetorch.ones(1)", cached=False)
        torch_s = median_of("import torch")
        numpy_s = median_of("import numpy")
    return [
        row("import", "import shapetorch", plain, {"torch": torch_s}),
        row("import-first-op", "import shapetorch; shapetorch.ones(1)", first_op, {"torch": torch_s, "numpy": numpy_s}),
        row("import-info", "import shapetorch; a first Linear(4, 3) forward, backward and SGD step", first_step,
            {"torch": torch_s}),
        row("import-info", "import shapetorch; shapetorch.ones(1), no bytecode cache (sources compiled)", uncached,
            {"cached": first_op}),
    ]


def typecheck(quick: bool) -> list[dict[str, Any]]:
    from . import bench_typecheck

    ops = 300 if quick else 1000
    s = bench_typecheck.measure(ops=ops, repeat=2 if quick else 3, pyright=not quick)
    rows = [
        row("typecheck", f"mypy + plugin, cold cache ({ops} ops)", s["mypy plugin cold"], {"mypy": s["mypy plain cold"]}),
        row("typecheck", f"mypy + plugin, warm cache, file edited ({ops} ops)", s["mypy plugin warm"],
            {"mypy": s["mypy plain warm"]}),
    ]
    if "pyright" in s:
        rows.append(row("typecheck-info", f"pyright (no plugin) vs mypy + plugin, cold ({ops} ops)", s["pyright"],
                        {"mypy+plugin": s["mypy plugin cold"]}))
    rows.append(row("typecheck-info", "loading the plugin (import shapetorch_mypy.plugin)", s["plugin import"], {}))
    return rows


def webgpu(quick: bool) -> list[dict[str, Any]]:
    import shapetorch as st

    if not st.is_webgpu_available():
        return []
    from . import bench_webgpu

    rows = []
    for name, ours, np_fn, t_fn, check, repeat in bench_webgpu.cases(quick):
        tw = bench_webgpu.timed(ours, repeat, sync=True)
        rows.append(row("webgpu", name, tw, {"numpy": bench_webgpu.timed(np_fn, max(repeat, 5)),
                                             "torch": bench_webgpu.timed(t_fn, max(repeat, 5))}, rel_err=check()))
    return rows


SECTIONS: dict[str, Callable[[bool], list[dict[str, Any]]]] = {
    "tiny": tiny, "large": large, "einsum": einsum, "training": training, "memory": memory,
    "import": import_time, "typecheck": typecheck, "webgpu": webgpu,
}


# -- report ----------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    import numpy
    import torch

    import shapetorch

    return {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "numpy": numpy.__version__,
            "shapetorch": shapetorch.__version__}


def fmt(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value / 2**20:.1f} MiB"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.2f} us"


def table(rows: list[dict[str, Any]]) -> str:
    """A Markdown table: the case, shapetorch's number, the ratio to each peer, and the target."""
    lines = ["| section | case | shapetorch | vs torch | vs numpy | vs autograd | vs mypy | target |",
             "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        cells = [f"{r['ratios'][p]:.2f}x" if p in r["ratios"] else "" for p in ("torch", "numpy", "autograd", "mypy")]
        t = r.get("target")
        if t is None:
            goal = ""
        elif t["peer"] == "seconds":
            goal = f"< {t['max']} s: {'met' if t['met'] else 'MISSED'}"
        else:
            goal = f"<= {t['max']}x {t['peer']}: {'met' if t['met'] else 'MISSED'}"
        lines.append(f"| {r['section']} | {r['case']} | {fmt(r['shapetorch'], r['unit'])} | " + " | ".join(cells)
                     + f" | {goal} |")
    return "\n".join(lines)


def plot(rows: list[dict[str, Any]], path: str, title: str) -> None:
    """Horizontal bars: each case's ratio to the peer its target names (or torch), log scale, the target marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    items = []
    for r in rows:
        t = r.get("target")
        if t is not None and t["peer"] == "seconds":
            continue
        peer = t["peer"] if t else ("torch" if "torch" in r["ratios"] else next(iter(r["ratios"]), None))
        if peer is None or peer not in r["ratios"]:
            continue
        items.append((f"{r['section']}: {r['case']} (vs {peer})", r["ratios"][peer], t))
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(items) + 1.5))
    ys = range(len(items))[::-1]
    colours = ["#9e9e9e" if t is None else ("#2e7d32" if t["met"] else "#c62828") for _, _, t in items]
    ax.barh(list(ys), [v for _, v, _ in items], color=colours, height=0.7)
    for y, (_, v, t) in zip(ys, items):
        if t is not None:
            ax.plot([t["max"], t["max"]], [y - 0.45, y + 0.45], color="black", linewidth=1.5)
        ax.text(v * 1.05, y, f"{v:.2f}x", va="center", fontsize=7)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([label for label, _, _ in items], fontsize=7)
    ax.set_xscale("log")
    values = [v for _, v, _ in items] + [t["max"] for _, _, t in items if t]
    lo, hi = min(values) / 1.5, max(values) * 2.0
    ax.set_xlim(lo, hi)
    ticks = [t for t in (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 1.5, 3, 10, 30, 100, 300, 1000) if lo <= t <= hi]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([f"{t:g}x" for t in ticks]))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.axvline(1.0, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("shapetorch time / peer time (log scale, below 1x is faster)\nblack tick: the target; "
                  "green: met, red: missed, grey: no target", fontsize=8)
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a few minutes)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--plot", help="draw the ratios here (PNG)")
    ap.add_argument("--markdown", help="write the table of ratios here (Markdown)")
    ap.add_argument("--only", nargs="+", choices=sorted(SECTIONS), help="run only these sections")
    ap.add_argument("--webgpu", action=argparse.BooleanOptionalAction, default=None,
                    help="run the WebGPU section (default: in full runs, when an adapter is available; a software "
                         "adapter such as lavapipe takes minutes)")
    args = ap.parse_args(argv)

    import torch

    torch.set_grad_enabled(True)
    t0 = time.perf_counter()
    rows: list[dict[str, Any]] = []
    durations: dict[str, float] = {}
    errors: dict[str, str] = {}
    for name, fn in SECTIONS.items():
        webgpu_off = args.webgpu is False or (args.webgpu is None and args.quick)
        if (args.only and name not in args.only) or (name == "webgpu" and webgpu_off):
            continue
        ts = time.perf_counter()
        print(f"-- {name}", flush=True)
        try:
            got = fn(args.quick)
        except Exception as e:  # one broken section must not lose the others
            errors[name] = f"{type(e).__name__}: {e}"
            print(f"   section failed: {errors[name]}", flush=True)
            got = []
        durations[name] = time.perf_counter() - ts
        for r in got:
            ratios = ", ".join(f"{k} {v:.2f}x" for k, v in r["ratios"].items())
            print(f"   {r['case']:<60} {fmt(r['shapetorch'], r['unit']):>10}   {ratios}", flush=True)
        rows += got
    total = time.perf_counter() - t0
    missed = [f"{r['section']}: {r['case']}" for r in rows if r.get("target", {}).get("met") is False]
    result = {"quick": args.quick, "duration_s": total, "section_durations_s": durations, "machine": machine(),
              "targets": TARGETS, "rows": rows, "missed": missed, "errors": errors}
    print(f"\n{table(rows)}\n\n{len(missed)} target(s) missed; {total:.0f} s in all")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table(rows) + "\n")
    if args.plot:
        m = result["machine"]
        plot(rows, args.plot, f"shapetorch {m['shapetorch']} ({'quick' if args.quick else 'full'} run, "
                              f"{m['cpus']} CPUs, torch {m['torch']}, numpy {m['numpy']})")
    return 1 if errors else 0
