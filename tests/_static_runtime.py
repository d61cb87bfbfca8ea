"""Static verdict = runtime verdict: render typed cases, run ONE mypy over them, run them on the runtime.

Shared by the random property test (``test_typing_static_runtime.py``) and the enumerated table
(``test_typing_static_table.py``). A case is ``(operands, expr)``: each operand is a shape (a float32
tensor) or ``(shape, kind)``, bound to ``a``, ``b``, ``c``; ``expr`` uses them and ``st`` (shapetorch),
``F`` (``shapetorch.nn.functional``) and ``nn``. A verdict is ``("shape", "(2, 3)", dtype)``,
``("error", code)`` or, from the runtime only, ``("raised", class, message)`` for an exception that
carries no catalogue code (always a mismatch: bad input must be a coded error).

Operand kinds: a dtype name (``float32``, ``float64``, ``int64``, ``bool``; values from ``arange``: floats
shifted so that ops see negatives and zeros, integers and bools non-zero), ``index`` (int64 zeros: a valid index into any non-empty dim) and
``eye`` (float32, identity matrices in the last two dims: invertible and positive definite when square).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import shapetorch
from shapetorch.typetest import run_mypy

Shape = tuple[int, ...]
Operand = Shape | tuple[Shape, str]
Case = tuple[Sequence[Operand], str]
Verdict = tuple[Any, ...]

NAMES = "abc"
_STATIC_DTYPE = {"index": "int64", "eye": "float32"}


def operand(o: Operand) -> tuple[Shape, str]:
    if len(o) == 2 and isinstance(o[0], tuple) and isinstance(o[1], str):
        return o[0], o[1]
    return o, "float32"  # type: ignore[return-value]


def tensor_type(shape: Shape, kind: str = "float32") -> str:
    dims = ", ".join(f"L[{d}]" for d in shape) or "()"  # tuple[()] is the 0-d shape
    dtype = _STATIC_DTYPE.get(kind, kind)
    return f"Tensor[tuple[{dims}], {'bool_' if dtype == 'bool' else dtype}]"


def render(batch: Sequence[Case]) -> tuple[str, dict[int, int]]:
    """One typed module: a function per case whose one line reveals the result; ``line -> case``."""
    lines = ["from typing import Literal as L", "import shapetorch as st",
             "from shapetorch import Tensor, float32, float64, int64, bool_", "from shapetorch import nn",
             "import shapetorch.nn.functional as F", ""]
    where: dict[int, int] = {}
    for i, (operands, expr) in enumerate(batch):
        params = ", ".join(f"{n}: {tensor_type(*operand(o))}" for n, o in zip(NAMES, operands))
        lines.append(f"def case_{i}({params}) -> None:")
        lines.append(f"    st.reveal_shape({expr})")
        where[len(lines)] = i
    return "\n".join(lines) + "\n", where


_LINE = re.compile(r"^.+?:(\d+): (error|note): (.*?)(?:  \[([\w-]+)\])?$")
_NOTE = re.compile(r"^Shape: (.*)  dtype: (.*)$")


def static_results(path: Path, where: dict[int, int]) -> dict[int, Verdict]:
    """Each case's verdict from one mypy run with the plugin: its first error code, else its revealed shape."""
    stdout, stderr, status = run_mypy([path])
    assert not stderr.strip() and status in (0, 1), f"mypy failed (exit status {status}):\n{stderr}\n{stdout[-3000:]}"
    out: dict[int, Verdict] = {}
    for line in stdout.splitlines():
        m = _LINE.match(line)
        if not m or int(m[1]) not in where:
            continue
        i = where[int(m[1])]
        if m[2] == "error":
            if out.get(i, ("",))[0] != "error":
                out[i] = ("error", m[4])
        elif (n := _NOTE.match(m[3])) and i not in out:
            out[i] = ("shape", n[1], n[2])
    return out


def decided(v: Verdict | None) -> bool:
    """Whether the plugin gave a verdict of its own (it is gradual: an unknown size is not one)."""
    if v is None:
        return False
    return v[0] == "error" or not ("?" in v[1] or "..." in v[1])


def _value(shape: Shape, kind: str) -> Any:
    n = 1
    for d in shape:
        n *= d
    if kind == "index":
        return shapetorch.zeros(shape, dtype=shapetorch.int64)
    if kind == "eye":
        x = shapetorch.zeros(shape)
        return x + shapetorch.eye(shape[-2], shape[-1]) if len(shape) >= 2 else x
    x = shapetorch.arange(1, 1 + n, dtype=shapetorch.float32).reshape(shape)
    if kind in ("float32", "float64"):
        return (x - 3).to(getattr(shapetorch, kind))
    # integers and bools stay non-zero: an integer division by zero is a value error the types do not see
    return x.to(getattr(shapetorch, "bool_" if kind == "bool" else kind))


def runtime_result(operands: Sequence[Operand], expr: str) -> Verdict:
    env: dict[str, Any] = {"st": shapetorch, "F": shapetorch.nn.functional, "nn": shapetorch.nn}
    for n, o in zip(NAMES, operands):
        env[n] = _value(*operand(o))
    try:
        value = eval(expr, env)
    except shapetorch.ShapetorchError as e:
        return "error", e.code
    except Exception as e:  # noqa: BLE001 - an uncoded exception is reported as a mismatch, not raised
        return "raised", type(e).__name__, str(e).splitlines()[0][:120] if str(e) else ""
    shape = tuple(value.shape)
    fmt = "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"
    return "shape", fmt, value.dtype.name


def same(static: Verdict, runtime: Verdict) -> bool:
    """Equal verdicts; a dtype the plugin leaves open (``Any``: the default dtype of a factory, which
    ``set_default_dtype`` changes at run time) is not compared."""
    if static[0] == "shape" and runtime[0] == "shape":
        return static[1] == runtime[1] and (static[2] in ("Any", "None") or static[2] == runtime[2])
    return static == runtime
