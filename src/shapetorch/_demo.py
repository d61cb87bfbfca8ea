"""``shapetorch demo``: train a small classifier, then show one shape bug caught twice — by the mypy
plugin before the program runs, and by the runtime with the same code and message."""

from __future__ import annotations

import importlib.util
import re
import sys
import tempfile
import time
from pathlib import Path

# The bug: a layer built for 784 features applied to a batch of 100-feature rows.
BUGGY_MODEL = '''\
from typing import Literal as L
import shapetorch as st
from shapetorch import Tensor, float32, nn

layer = nn.Linear(784, 256)

def embed(x: Tensor[tuple[L[32], L[100]], float32]) -> Tensor:
    return layer(x)
'''


def _bar(done: int, total: int, width: int = 24) -> str:
    filled = width * done // total
    return "[" + "#" * filled + "." * (width - filled) + "]"


def train(epochs: int = 8, quiet: bool = False) -> float:
    """A 2-layer MLP on three Gaussian blobs (generated, seeded); returns the final accuracy."""
    import shapetorch as st
    from shapetorch import nn, optim

    st.manual_seed(0)
    centers = st.tensor([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
    labels = st.randint(0, 3, (600,))
    points = centers[labels] + 0.9 * st.randn(600, 2)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 3))
    opt = optim.Adam(model.parameters(), lr=0.05)
    batches = 10
    for epoch in range(1, epochs + 1):
        order = st.randperm(600)
        for b in range(batches):
            idx = order[b * 60 : (b + 1) * 60]
            loss = nn.functional.cross_entropy(model(points[idx]), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            if not quiet:
                sys.stdout.write(f"\r  epoch {epoch}/{epochs} {_bar(b + 1, batches)} loss {loss.item():.4f}")
                sys.stdout.flush()
        if not quiet:
            sys.stdout.write("\n")
    with st.no_grad():
        accuracy = (model(points).argmax(dim=1) == labels).float().mean().item()
    return float(accuracy)


def static_check() -> str:
    """The mypy plugin's verdict on BUGGY_MODEL, or the shared rule's when mypy is not installed."""
    if importlib.util.find_spec("mypy") is None:
        from shapetorch._rules import RuleError, matmul_shape

        try:
            matmul_shape((32, 100), (784, 256), op="matmul")
        except RuleError as e:
            return f"(mypy not installed; the rule the plugin runs says) error: {e.message}  [{e.code}]"
        return "no error"
    from shapetorch.typetest import run_mypy

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.py"
        path.write_text(BUGGY_MODEL)
        stdout, _, _ = run_mypy([path])
    lines = [re.sub(r"\S*model\.py", "model.py", ln) for ln in stdout.splitlines() if "error:" in ln]
    return "\n  ".join(lines) or "no error"


def runtime_check() -> str:
    import shapetorch as st
    from shapetorch import nn

    layer = nn.Linear(784, 256)
    try:
        layer(st.randn(32, 100))
    except st.ShapetorchError as e:
        return f"{type(e).__name__} [{e.code}]: {e}"
    return "no error"


def main() -> int:
    print("1. Training a small classifier (2-32-3 MLP, Adam) on generated data")
    t0 = time.perf_counter()
    accuracy = train()
    print(f"   final accuracy {accuracy:.1%} in {time.perf_counter() - t0:.1f} s\n")
    print("2. A shape bug, before running (mypy with the shapetorch plugin):")
    print("   " + BUGGY_MODEL.strip().replace("\n", "\n   "))
    print("\n  " + static_check())
    print("\n3. The same bug at runtime (the same rule, the same code):")
    print("  " + runtime_check())
    return 0
