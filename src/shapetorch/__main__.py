"""The ``shapetorch`` command: ``demo`` (default), ``info``, ``check FILES`` and ``typetest PATH``."""

from __future__ import annotations

import argparse
import importlib
import sys
import time


def demo() -> int:
    """Tensors with PyTorch semantics, then a shape bug caught before any kernel runs."""
    import shapetorch as st

    st.manual_seed(0)
    x = st.randn(4, 3)
    w = st.randn(3, 2, requires_grad=True)
    print("x @ w with x:", tuple(x.shape), "w:", tuple(w.shape))
    y = (x @ w).clamp(min=0)
    print(y)
    loss = y.sum()
    loss.backward()
    print("grad of w:", w.grad)
    print("\nA shape bug, caught by the shared rule before NumPy sees it:")
    try:
        st.randn(4, 3) @ st.randn(4, 2)
    except st.ShapeError as e:
        print(f"  {type(e).__name__} [{e.code}]: {e}")
    print("\nThe same rule, called directly (this is what the mypy plugin runs on your annotations):")
    from shapetorch._rules import RuleError, Sym, matmul_shape

    print("  matmul_shape((Batch, 8, 16), (16, 4)) =", matmul_shape((Sym("Batch"), 8, 16), (16, 4)))
    try:
        matmul_shape((Sym("Batch"), 8, 16), (32, 4))
    except RuleError as e:
        print(f"  RuleError [{e.code}]: {e}")
    return 0


def info() -> int:
    t0 = time.perf_counter()
    import shapetorch as st

    st.zeros(1)
    print(f"shapetorch {st.__version__} (runtime loaded in {time.perf_counter() - t0:.3f} s)")
    print("devices:", ", ".join(st.list_devices()))
    print("ops:", len(st.list_ops()))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="shapetorch", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="show tensors and a shape error caught by the shared rules")
    sub.add_parser("info", help="version, devices and op count")
    check = sub.add_parser("check", help="type-check FILES with mypy and the shapetorch plugin")
    check.add_argument("files", nargs="+")
    tt = sub.add_parser("typetest", help="check # E: / # N: expectations in PATH")
    tt.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        return demo()
    if args.command == "info":
        return info()
    # The static-checking commands live with the typetest runner (they need mypy, not the runtime).
    runner = importlib.import_module("shapetorch.typetest")
    if args.command == "check":
        return int(runner.check_main(args.files))
    return int(runner.main(args.paths))


if __name__ == "__main__":
    sys.exit(main())
