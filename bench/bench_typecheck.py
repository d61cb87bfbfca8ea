"""What static shape checking costs: mypy with and without the plugin, pyright, and plugin load time.

    python bench/bench_typecheck.py [--ops 1000] [--repeat 3]     (``python -m bench`` calls ``measure``)

It generates a file of about ``--ops`` shape ops (matmul, broadcasting, reshape, reductions,
einsum, indexing) over literal shapes, then times each checker on it: cold (a fresh cache) and
warm (the stdlib cache built, the file re-checked). The medians are printed in seconds.
Wall-clock numbers are for reading, not for asserting.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPS_PER_FUNCTION = 8


def generate(n_ops: int) -> str:
    lines = [
        "from typing import Literal as L",
        "import shapetorch as st",
        "from shapetorch import Tensor, float32",
        "",
    ]
    for i in range(max(1, n_ops // OPS_PER_FUNCTION)):
        m, k, n = 2 + i % 5, 3 + i % 7, 4 + i % 3
        lines += [
            f"def f{i}(a: Tensor[tuple[L[{m}], L[{k}]], float32], b: Tensor[tuple[L[{k}], L[{n}]], float32],",
            f"        bias: Tensor[tuple[L[{n}]], float32]) -> Tensor[tuple[L[{m}]], float32]:",
            "    y = a @ b + bias",
            f"    z = y.reshape(-1).reshape({m}, {n})",
            "    s = z.sum(-1, keepdim=True) * z",
            "    e = st.einsum('ij,jk->ik', a, b)",
            "    t = (e - s).transpose(0, 1)[0]",
            "    return t.mean(0) + y[:, 0]",
            "",
        ]
    return "\n".join(lines) + "\n"


def _time(cmd: list[str], cwd: Path, repeat: int, clean: Path | None = None, touch: Path | None = None) -> float:
    runs = []
    for i in range(repeat):
        if clean is not None:
            shutil.rmtree(clean, ignore_errors=True)
        if touch is not None:  # the file changed (new size, so mypy rechecks it), the stdlib did not
            touch.write_text(touch.read_text() + f"# edit {i}\n")
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=cwd, capture_output=True, check=False)
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def plugin_load_time(repeat: int) -> float:
    code = "import time; t=time.perf_counter(); import shapetorch_mypy.plugin; print(time.perf_counter()-t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                 text=True, check=True).stdout) for _ in range(repeat)]
    return statistics.median(runs)


def measure(ops: int = 1000, repeat: int = 3, pyright: bool = True) -> dict[str, float]:
    """Median seconds per checker run on a generated file of about ``ops`` shape ops (see the module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "big.py").write_text(generate(ops))
        (d / "plugin.ini").write_text("[mypy]\nplugins = shapetorch_mypy\n")
        (d / "plain.ini").write_text("[mypy]\n")
        results: dict[str, float] = {}
        for name in ("plugin", "plain"):
            cache = d / f".cache_{name}"
            cmd = [sys.executable, "-m", "mypy", "--config-file", f"{name}.ini", "--cache-dir", str(cache), "big.py"]
            results[f"mypy {name} cold"] = _time(cmd, d, repeat, clean=cache)
            subprocess.run(cmd, cwd=d, capture_output=True, check=False)
            results[f"mypy {name} warm"] = _time(cmd, d, repeat, touch=d / "big.py")
        pyright_bin = Path(sys.executable).parent / "pyright"
        if pyright and pyright_bin.exists():
            results["pyright"] = _time([str(pyright_bin), "--pythonpath", sys.executable, "big.py"], d, repeat)
        results["plugin import"] = plugin_load_time(repeat)
    return results


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    results = measure(args.ops, args.repeat)
    print(json.dumps({"ops": args.ops, "seconds": {k: round(v, 3) for k, v in results.items()}}, indent=2))


if __name__ == "__main__":
    main()
