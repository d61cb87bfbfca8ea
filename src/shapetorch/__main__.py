"""The ``shapetorch`` command: ``demo`` (default), ``info``, ``check FILES``, ``typetest PATH`` and ``lsp``."""

from __future__ import annotations

import argparse
import importlib
import sys
import time


def demo() -> int:
    from ._demo import main as run_demo

    return run_demo()


def info() -> int:
    t0 = time.perf_counter()
    import shapetorch as st

    st.zeros(1)
    print(f"shapetorch {st.__version__} (runtime loaded in {time.perf_counter() - t0:.3f} s)")
    print("devices:", ", ".join(st.list_devices()))
    from .backends.webgpu.api import unavailable_reason

    why = unavailable_reason()
    print("webgpu:", "available" if why is None else f"unavailable ({why})")
    print("ops:", len(st.list_ops()), "functions,", len(st.list_methods()), "Tensor methods")
    rows = st.coverage_report(devices=["cpu"])
    print(f"dtype coverage (cpu): {sum(r.forward for r in rows)} of {len(rows)} (op, dtype) pairs run forward, "
          f"{sum(r.backward for r in rows)} differentiate (docs/dtype-coverage.md has the table)")
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
    sub.add_parser("lsp", help="the language server (stdio): shapes in hovers, inlay hints and diagnostics")
    args = parser.parse_args(argv)
    if args.command in (None, "demo"):
        return demo()
    if args.command == "info":
        return info()
    if args.command == "lsp":
        from .lsp import main as lsp

        return lsp()
    # The static-checking commands live with the typetest runner (they need mypy, not the runtime).
    runner = importlib.import_module("shapetorch.typetest")
    if args.command == "check":
        return int(runner.check_main(args.files))
    return int(runner.main(args.paths))


if __name__ == "__main__":
    sys.exit(main())
