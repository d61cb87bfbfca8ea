"""Generate ``shapetorch-stubs/__init__.pyi`` from the op tables below.

    python stubs/generate_stubs.py          # rewrite the stub
    python stubs/generate_stubs.py --check  # exit 1 if the stub is stale (tests run this)

The stub serves three audiences (see docs/type-safety.md):

* mypy with ``shapetorch_mypy``: the plugin marks ``_PRECISE_STUBS`` always-false, so mypy reads the
  permissive ``elif MYPY:`` branch and the plugin computes every shape from the rules;
* mypy without the plugin: both branches are reachable and mypy keeps the first (precise) one;
* pyright: uses the last declaration, the ``else:`` branch (the same precise text again).

So the precise text is written once here and emitted twice.
"""

from __future__ import annotations

import sys
from pathlib import Path

from shapetorch_mypy.table import BINARY as PLUGIN_BINARY
from shapetorch_mypy.table import UNARY_BOOL as PLUGIN_UNARY_BOOL

sys.path.insert(0, str(Path(__file__).resolve().parent))  # nn_stubs, when imported from tests

OUT = Path(__file__).parent / "shapetorch-stubs" / "__init__.pyi"

DTYPES = ["bool_", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
ALIASES = {"bool": "bool_", "half": "float16", "float": "float32", "double": "float64", "short": "int16",
           "int": "int32", "long": "int64", "cfloat": "complex64", "cdouble": "complex128"}

# ---------------------------------------------------------------------------------- op tables
UNARY_FLOAT = (
    "exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh "
    "sigmoid sqrt rsqrt reciprocal erf erfc erfinv lgamma digamma sinc deg2rad rad2deg i0"
).split()
UNARY_SAME = "abs neg negative positive sign floor ceil round trunc frac relu square".split()
UNARY_BOOL = PLUGIN_UNARY_BOOL
KEEP = "clone detach contiguous cpu".split()  # (self) -> Tensor[S, D], methods and functions
# The binary ops and their dtype rules are the plugin's table: one list for both (isclose has its own stub,
# with rtol/atol).
BINARY = {k: v for k, v in PLUGIN_BINARY.items() if k != "isclose"}
DUNDERS = {"add": "promote", "sub": "promote", "mul": "promote", "truediv": "float", "floordiv": "promote",
           "mod": "promote", "pow": "promote", "and": "promote", "or": "promote", "xor": "promote"}
COMPARE = ["lt", "le", "gt", "ge", "eq", "ne"]
REDUCTIONS = {
    "sum": "sum", "nansum": "sum", "prod": "sum", "mean": "same", "nanmean": "same", "amax": "same",
    "amin": "same", "argmax": "int64", "argmin": "int64", "all": "bool", "any": "bool", "std": "float",
    "var": "float", "logsumexp": "float", "count_nonzero": "int64",
}
ALONG_DIM = {"softmax": "float", "log_softmax": "float", "cumsum": "any", "cumprod": "any"}
CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16", "int": "int32",
         "long": "int64", "short": "int16", "bool": "bool_", "byte": "uint8", "char": "int8"}
FACTORIES = ["zeros", "ones", "empty", "rand", "randn"]
LIKE = ["zeros_like", "ones_like", "empty_like", "rand_like", "randn_like"]
MAX_RANK = 4  # count overloads for reshape/view/expand/factories

FACTORY_KW = "dtype: None = None, device: Incomplete = None, requires_grad: _bool = False"
FACTORY_KW_D = "dtype: type[_D2], device: Incomplete = None, requires_grad: _bool = False"


def _dtype_of(rule: str) -> tuple[str, str]:
    """(self's dtype in the precise signature, the result dtype) for a dtype rule."""
    return {"same": ("D", "D"), "sum": ("_FT", "_FT"), "float": ("_FT", "_FT"), "int64": ("D", "int64"),
            "bool": ("D", "bool_"), "promote": ("D", "D"), "any": ("D", "Any")}[rule]


# ---------------------------------------------------------------------------------- templates
def unary_float(name: str, method: bool) -> list[str]:
    first = "self" if method else "input"
    rest = "" if method else ", *, out: Incomplete = None"
    return [
        "@overload",
        f"def {name}({first}: Tensor[_S2, _FT]{rest}) -> Tensor[_S2, _FT]: ...",
        "@overload",
        f"def {name}({first}: Tensor[_S2, Any]{rest}) -> Tensor[_S2, Any]: ...",
    ]


def binary_precise(name: str, rule: str, method: bool, other: str = "other") -> list[str]:
    first = "self" if method else "input"
    if rule == "bool":
        return [
            "@overload",
            f"def {name}({first}: Tensor[_S2, Any], {other}: Tensor[_S2, Any] | _complex) -> Tensor[_S2, bool_]: ...",
            "@overload",
            f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], Any], {other}: Tensor[tuple[_N], Any]) "
            "-> Tensor[tuple[Unpack[_Bs], _N], bool_]: ...",
            "@overload",
            f"def {name}({first}: Tensor[Any, Any], {other}: Tensor[Any, Any] | _complex) -> Tensor[AnyShape, bool_]: ...",
        ]
    dt = "_FT" if rule == "float" else "_D2"
    lines = [
        "@overload",
        f"def {name}({first}: Tensor[_S2, {dt}], {other}: Tensor[_S2, {dt}]) -> Tensor[_S2, {dt}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {dt}], {other}: Tensor[tuple[_N], {dt}]) "
        f"-> Tensor[tuple[Unpack[_Bs], _N], {dt}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[_S2, _FT], {other}: _float) -> Tensor[_S2, _FT]: ...",
    ]
    if rule == "promote":
        lines += ["@overload", f"def {name}({first}: Tensor[_S2, _IT], {other}: _int) -> Tensor[_S2, _IT]: ..."]
    lines += [
        "@overload",
        f"def {name}({first}: Tensor[Any, Any], {other}: Tensor[Any, Any] | _complex) -> Tensor[AnyShape, Any]: ...",
    ]
    return lines


def binary_permissive(name: str, rule: str, method: bool, other: str = "other") -> list[str]:
    first = "self" if method else "input: Tensor[Any, Any] | _complex"
    ret = "bool_" if rule == "bool" else "Any"
    return [f"def {name}({first}, {other}: Tensor[Any, Any] | _complex) -> Tensor[Any, {ret}]: ..."]


def reduction_precise(name: str, rule: str, method: bool) -> list[str]:
    first = "self" if method else "input"
    sd, rd = _dtype_of(rule)
    lines = [
        "@overload",
        f"def {name}({first}: Tensor[Any, {sd}], dim: None = None, keepdim: _bool = False) -> Tensor[tuple[()], {rd}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {sd}], dim: _L[-1], keepdim: _L[False] = False) "
        f"-> Tensor[tuple[Unpack[_Bs]], {rd}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {sd}], dim: _L[-1], keepdim: _L[True]) "
        f"-> Tensor[tuple[Unpack[_Bs], _L[1]], {rd}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[Any, {sd}], dim: _int | Sequence[_int] | None = None, keepdim: _bool = False) "
        f"-> Tensor[AnyShape, {rd}]: ...",
    ]
    if rule in ("sum", "float"):  # integer inputs: the dtype is not expressible without the plugin
        lines += ["@overload",
                  f"def {name}({first}: Tensor[Any, Any], dim: _int | Sequence[_int] | None = None, "
                  "keepdim: _bool = False) -> Tensor[AnyShape, Any]: ..."]
    if rule == "same" and name.startswith("a"):
        pass
    # the first overload leaves the dim out; argmax(dim=None, keepdim) etc. match the generic one
    return lines


def reduction_permissive(name: str, rule: str, method: bool) -> list[str]:
    first = "self" if method else "input: Tensor[Any, D]"
    rd = {"int64": "int64", "bool": "bool_", "same": "D"}.get(rule, "Any")
    return [f"def {name}({first}, dim: _int | Sequence[_int] | None = None, keepdim: _bool = False, "
            f"*, dtype: Incomplete = None) -> Tensor[Any, {rd}]: ..."]


def sized(name: str, first: str, ret_dtype: str, kw: str = "") -> list[str]:
    """Overloads by the number of sizes: ``f(2, 3)`` -> ``tuple[Any, Any]`` (pyright and plain mypy)."""
    lines: list[str] = []
    kw = f", *, {kw}" if kw else ""
    for n in range(1, MAX_RANK + 1):
        params = ", ".join(f"s{i}: _int" for i in range(n))
        ret = ", ".join(["Any"] * n)
        lines += ["@overload", f"def {name}({first}{params}, /{kw}) -> Tensor[tuple[{ret}], {ret_dtype}]: ..."]
    lines += ["@overload", f"def {name}({first}size: Sequence[_int], /{kw}) -> Tensor[AnyShape, {ret_dtype}]: ..."]
    star_kw = kw.replace(", *, ", ", ")
    lines += ["@overload", f"def {name}({first}*size: _int{star_kw}) -> Tensor[AnyShape, {ret_dtype}]: ..."]
    return lines


# ---------------------------------------------------------------------------------- Tensor class
def tensor_common() -> list[str]:
    out = [
        "@property",
        "def shape(self) -> S: ...",
        "@property",
        "def dtype(self) -> type[D]: ...",
        "@property",
        "def device(self) -> Incomplete: ...",
        "@property",
        "def ndim(self) -> _int: ...",
        "requires_grad: _bool",
        "grad: Tensor[S, D] | None",
        "@property",
        "def is_leaf(self) -> _bool: ...",
        "@property",
        "def grad_fn(self) -> Incomplete: ...",
        "def __init__(self, *args: Any, **kwargs: Any) -> None: ...",
        "def dim(self) -> _int: ...",
        "def numel(self) -> _int: ...",
        "def element_size(self) -> _int: ...",
        "@overload",
        "def size(self, dim: None = None) -> S: ...",
        "@overload",
        "def size(self, dim: _int) -> _int: ...",
        "def stride(self, dim: _int | None = None) -> Any: ...",
        "def is_contiguous(self, memory_format: Incomplete = None) -> _bool: ...",
        "def is_floating_point(self) -> _bool: ...",
        "def is_complex(self) -> _bool: ...",
        "def item(self) -> Any: ...",
        "def tolist(self) -> Any: ...",
        "def numpy(self, *, force: _bool = False) -> Incomplete: ...",
        "def __array__(self, dtype: Incomplete = None, copy: Incomplete = None) -> Incomplete: ...",
        "def __dlpack__(self, *args: Any, **kwargs: Any) -> Incomplete: ...",
        "def __dlpack_device__(self) -> Incomplete: ...",
        "def backward(self, gradient: Tensor[Any, Any] | None = None, retain_graph: _bool | None = None, "
        "create_graph: _bool = False, inputs: Incomplete = None) -> None: ...",
        "def requires_grad_(self, requires_grad: _bool = True) -> Self: ...",
        "def retain_grad(self) -> None: ...",
        "def register_hook(self, hook: Callable[[Tensor[S, D]], Tensor[Any, Any] | None]) -> Incomplete: ...",
        "def detach_(self) -> Self: ...",
        "def zero_(self) -> Self: ...",
        "def fill_(self, value: _complex | Tensor[Any, Any]) -> Self: ...",
        "def copy_(self, src: Tensor[Any, Any], non_blocking: _bool = False) -> Self: ...",
        "def __len__(self) -> _int: ...",
        "def __iter__(self) -> Iterator[Tensor[AnyShape, D]]: ...",
        "def __bool__(self) -> _bool: ...",
        "def __float__(self) -> _float: ...",
        "def __int__(self) -> _int: ...",
        "def __index__(self) -> _int: ...",
        "def __hash__(self) -> _int: ...",
        "def __neg__(self) -> Tensor[S, D]: ...",
        "def __pos__(self) -> Tensor[S, D]: ...",
        "def __abs__(self) -> Tensor[S, D]: ...",
        "def __invert__(self) -> Tensor[S, D]: ...",
        "def __setitem__(self, index: Any, value: Tensor[Any, Any] | _complex) -> None: ...",
    ]
    for d in DUNDERS:
        out.append(f"def __i{d}__(self, other: Tensor[Any, Any] | _complex) -> Self: ...")
    for name, dt in CASTS.items():
        out.append(f"def {name}(self) -> Tensor[S, {dt}]: ...")
    out += [
        "@overload",
        "def to(self, dtype: type[_D2], /, *, non_blocking: _bool = False, copy: _bool = False) -> Tensor[S, _D2]: ...",
        "@overload",
        "def to(self, device: Incomplete, dtype: type[_D2], /, *, non_blocking: _bool = False, copy: _bool = False) "
        "-> Tensor[S, _D2]: ...",
        "@overload",
        "def to(self, *args: Any, **kwargs: Any) -> Tensor[S, Any]: ...",
        "@overload",
        "def type(self, dtype: None = None) -> str: ...",
        "@overload",
        "def type(self, dtype: type[_D2]) -> Tensor[S, _D2]: ...",
    ]
    for n in UNARY_SAME + KEEP:
        out.append(f"def {n}(self) -> Tensor[S, D]: ...")
        if n not in KEEP:
            out.append(f"def {n}_(self) -> Self: ...")
    out.append("def clamp(self, min: Incomplete = None, max: Incomplete = None) -> Tensor[S, D]: ...")
    out.append("def clip(self, min: Incomplete = None, max: Incomplete = None) -> Tensor[S, D]: ...")
    out.append("def nan_to_num(self, nan: _float = 0.0, posinf: _float | None = None, neginf: _float | None = None) "
               "-> Tensor[S, D]: ...")
    for n in UNARY_FLOAT:
        out += unary_float(n, True)
        out.append(f"def {n}_(self) -> Self: ...")
    for n in UNARY_BOOL:
        out.append(f"def {n}(self) -> Tensor[S, bool_]: ...")
    for n, rule in ALONG_DIM.items():
        if rule == "float":
            out += ["@overload", f"def {n}(self: Tensor[_S2, _FT], dim: _int, dtype: None = None) -> Tensor[_S2, _FT]: ...",
                    "@overload", f"def {n}(self: Tensor[_S2, Any], dim: _int, dtype: Incomplete = None) -> Tensor[_S2, Any]: ..."]
        else:
            out.append(f"def {n}(self, dim: _int, *, dtype: Incomplete = None) -> Tensor[S, Any]: ...")
    out += selection_ops(True)
    out += [
        "def where(self, condition: Tensor[Any, Any], other: Tensor[Any, Any] | _complex) -> Tensor[AnyShape, Any]: ...",
        "def masked_fill(self, mask: Tensor[Any, Any], value: _complex | Tensor[Any, Any]) -> Tensor[S, D]: ...",
    ]
    return out


def selection_ops(method: bool) -> list[str]:
    """max/min with dim, sorts, selections, scans, gather/scatter, tiling, flipping, tensor_split.

    The same text in every branch: the shapes that do not depend on arguments are exact here
    (sort, roll, flip, scatter keep S; gather has the index's shape); with the plugin, the rules
    compute the rest (``_ValuesIndices`` is the (values, indices) named tuple these ops return)."""
    s, d = ("S", "D") if method else ("_S2", "_D2")
    first = "self" if method else f"input: Tensor[{s}, {d}]"
    out: list[str] = []
    for n in ("max", "min"):
        out += [
            "@overload", f"def {n}({first}) -> Tensor[tuple[()], {d}]: ...",
            "@overload", f"def {n}({first}, dim: _int, keepdim: _bool = False) -> _ValuesIndices[AnyShape, {d}]: ...",
            "@overload", f"def {n}({first}, other: Tensor[Any, Any]) -> Tensor[AnyShape, Any]: ...",
        ]
    for n in ("median", "nanmedian"):
        out += [
            "@overload", f"def {n}({first}) -> Tensor[tuple[()], {d}]: ...",
            "@overload", f"def {n}({first}, dim: _int, keepdim: _bool = False) -> _ValuesIndices[AnyShape, {d}]: ...",
        ]
    out += [
        f"def mode({first}, dim: _int = -1, keepdim: _bool = False) -> _ValuesIndices[AnyShape, {d}]: ...",
        f"def sort({first}, dim: _int = -1, descending: _bool = False, *, stable: _bool | None = False) "
        f"-> _ValuesIndices[{s}, {d}]: ...",
        f"def argsort({first}, dim: _int = -1, descending: _bool = False, *, stable: _bool = False) -> Tensor[{s}, int64]: ...",
        f"def topk({first}, k: _int, dim: _int = -1, largest: _bool = True, sorted: _bool = True) "
        f"-> _ValuesIndices[AnyShape, {d}]: ...",
        f"def kthvalue({first}, k: _int, dim: _int = -1, keepdim: _bool = False) -> _ValuesIndices[AnyShape, {d}]: ...",
        f"def cummax({first}, dim: _int) -> _ValuesIndices[{s}, {d}]: ...",
        f"def cummin({first}, dim: _int) -> _ValuesIndices[{s}, {d}]: ...",
        f"def logcumsumexp({first}, dim: _int) -> Tensor[{s}, {d}]: ...",
        f"def gather({first}, dim: _int, index: Tensor[_S3, Any], *, sparse_grad: _bool = False) -> Tensor[_S3, {d}]: ...",
        f"def scatter({first}, dim: _int, index: Tensor[Any, Any], src: Tensor[Any, Any] | _complex | None = None, *, "
        f"value: _complex | None = None, reduce: str | None = None) -> Tensor[{s}, {d}]: ...",
        f"def scatter_add({first}, dim: _int, index: Tensor[Any, Any], src: Tensor[Any, Any]) -> Tensor[{s}, {d}]: ...",
        f"def scatter_reduce({first}, dim: _int, index: Tensor[Any, Any], src: Tensor[Any, Any], reduce: str, *, "
        f"include_self: _bool = True) -> Tensor[{s}, {d}]: ...",
        f"def index_select({first}, dim: _int, index: Tensor[Any, Any]) -> Tensor[AnyShape, {d}]: ...",
        f"def tile({first}, dims: Sequence[_int]) -> Tensor[AnyShape, {d}]: ...",
        f"def roll({first}, shifts: _int | Sequence[_int], dims: _int | Sequence[_int] | None = None) -> Tensor[{s}, {d}]: ...",
        f"def flip({first}, *args: _int | Sequence[_int], dims: _int | Sequence[_int] | None = None) -> Tensor[{s}, {d}]: ...",
        f"def tensor_split({first}, indices_or_sections: _int | Sequence[_int] | Tensor[Any, Any], dim: _int = 0) "
        f"-> tuple[Tensor[AnyShape, {d}], ...]: ...",
    ]
    if method:
        out += ["def repeat(self, *sizes: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ..."]
        for n in ("add_", "sub_", "mul_", "div_"):
            alpha = ", *, alpha: _complex = 1" if n in ("add_", "sub_") else ""
            mode = ", *, rounding_mode: str | None = None" if n == "div_" else ""
            out.append(f"def {n}(self, other: Tensor[Any, Any] | _complex{alpha}{mode}) -> Self: ...")
    return out


# Fixed-rank patterns such as `self: Tensor[tuple[_M, _K], D]` bind _M and _K to Never in mypy when the
# rank is unknown (tuple[Any, ...]), which would be a false error; pyright binds them to Any. So the
# mypy-without-plugin branch gets these ops with unknown-shape results instead.
FIXED_RANK_PLAIN = {
    "mm": "(self, mat2: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "bmm": "(self, mat2: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "mv": "(self, vec: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "dot": "(self, other: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "outer": "(self, vec2: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "ger": "(self, vec2: Tensor[Any, D]) -> Tensor[AnyShape, D]",
    "t": "(self) -> Tensor[AnyShape, D]",
    "transpose": "(self, dim0: _int, dim1: _int) -> Tensor[AnyShape, D]",
}
FIXED_RANK_PLAIN_FUNCTIONS = {
    "mm": "(input: Tensor[Any, _D2], mat2: Tensor[Any, _D2]) -> Tensor[AnyShape, _D2]",
    "bmm": "(input: Tensor[Any, _D2], mat2: Tensor[Any, _D2]) -> Tensor[AnyShape, _D2]",
    "mv": "(input: Tensor[Any, _D2], vec: Tensor[Any, _D2]) -> Tensor[AnyShape, _D2]",
    "dot": "(input: Tensor[Any, _D2], other: Tensor[Any, _D2]) -> Tensor[AnyShape, _D2]",
    "outer": "(input: Tensor[Any, _D2], vec2: Tensor[Any, _D2]) -> Tensor[AnyShape, _D2]",
}


def for_mypy(lines: list[str], plain: dict[str, str]) -> list[str]:
    """The precise lines with the fixed-rank definitions in ``plain`` replaced (see FIXED_RANK_PLAIN)."""
    out: list[str] = []
    done: set[str] = set()
    for ln in lines:
        name = ln[4:].split("(")[0] if ln.startswith("def ") else None
        if name in plain:
            if out and out[-1] == "@overload":
                out.pop()
            if name not in done:
                out.append(f"def {name}{plain[name]}: ...")
                done.add(name)
            continue
        out.append(ln)
    return out


def tensor_precise() -> list[str]:
    out: list[str] = []
    for d, rule in DUNDERS.items():
        out += binary_precise(f"__{d}__", rule, True)
        out += binary_precise(f"__r{d}__", rule, True)
    for c in COMPARE:
        lines = binary_precise(f"__{c}__", "bool", True)
        if c in ("eq", "ne"):
            lines = [ln + "  # type: ignore[override]" if ln.startswith("def") else ln for ln in lines]
        out += lines
    for n, rule in BINARY.items():
        out += binary_precise(n, rule, True)
    out += binary_precise("pow", "promote", True, other="exponent")
    out += matmul_precise("__matmul__", "self", "other")
    out += matmul_precise("matmul", "self", "other")
    out += [
        "def mm(self: Tensor[tuple[_M, _K], D], mat2: Tensor[tuple[_K, _N], D]) -> Tensor[tuple[_M, _N], D]: ...",
        "def bmm(self: Tensor[tuple[_B, _M, _K], D], mat2: Tensor[tuple[_B, _K, _N], D]) -> Tensor[tuple[_B, _M, _N], D]: ...",
        "def mv(self: Tensor[tuple[_M, _K], D], vec: Tensor[tuple[_K], D]) -> Tensor[tuple[_M], D]: ...",
        "def dot(self: Tensor[tuple[_K], D], other: Tensor[tuple[_K], D]) -> Tensor[tuple[()], D]: ...",
        "def inner(self, other: Tensor[Any, D]) -> Tensor[AnyShape, D]: ...",
        "def outer(self: Tensor[tuple[_M], D], vec2: Tensor[tuple[_N], D]) -> Tensor[tuple[_M, _N], D]: ...",
        "def ger(self: Tensor[tuple[_M], D], vec2: Tensor[tuple[_N], D]) -> Tensor[tuple[_M, _N], D]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += reduction_precise(n, rule, True)
    out += sized("reshape", "self, ", "D")
    out += sized("view", "self, ", "D")
    out += sized("expand", "self, ", "D")
    out += [
        "@overload",
        "def view(self, dtype: type[_D2], /) -> Tensor[AnyShape, _D2]: ...",
        "def broadcast_to(self, size: Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def expand_as(self, other: Tensor[_S2, Any]) -> Tensor[_S2, D]: ...",
        "def flatten(self, start_dim: _int = 0, end_dim: _int = -1) -> Tensor[AnyShape, D]: ...",
        "def unflatten(self, dim: _int, sizes: Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "@overload",
        "def transpose(self: Tensor[tuple[_M, _N], D], dim0: _L[0, -2], dim1: _L[1, -1]) -> Tensor[tuple[_N, _M], D]: ...",
        "@overload",
        "def transpose(self, dim0: _int, dim1: _int) -> Tensor[AnyShape, D]: ...",
        "def swapdims(self, dim0: _int, dim1: _int) -> Tensor[AnyShape, D]: ...",
        "def swapaxes(self, axis0: _int, axis1: _int) -> Tensor[AnyShape, D]: ...",
        "def permute(self, *dims: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def movedim(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "def moveaxis(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[AnyShape, D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[_M, _N], D]) -> Tensor[tuple[_N, _M], D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[_M], D]) -> Tensor[tuple[_M], D]: ...",
        "@overload",
        "def t(self: Tensor[tuple[()], D]) -> Tensor[tuple[()], D]: ...",
        "@property",
        "def mT(self: Tensor[tuple[Unpack[_Bs], _M, _N], D]) -> Tensor[tuple[Unpack[_Bs], _N, _M], D]: ...",
        "@property",
        "def T(self) -> Tensor[AnyShape, D]: ...",
        "def squeeze(self, dim: _int | Sequence[_int] | None = None) -> Tensor[AnyShape, D]: ...",
        "@overload",
        "def unsqueeze(self: Tensor[tuple[Unpack[_Ts]], D], dim: _L[0]) -> Tensor[tuple[_L[1], Unpack[_Ts]], D]: ...",
        "@overload",
        "def unsqueeze(self: Tensor[tuple[Unpack[_Ts]], D], dim: _L[-1]) -> Tensor[tuple[Unpack[_Ts], _L[1]], D]: ...",
        "@overload",
        "def unsqueeze(self, dim: _int) -> Tensor[AnyShape, D]: ...",
        "def select(self, dim: _int, index: _int) -> Tensor[AnyShape, D]: ...",
        "def narrow(self, dim: _int, start: _int, length: _int) -> Tensor[AnyShape, D]: ...",
        "def split(self, split_size_or_sections: _int | Sequence[_int], dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "def chunk(self, chunks: _int, dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "def unbind(self, dim: _int = 0) -> tuple[Tensor[AnyShape, D], ...]: ...",
        "@overload",
        "def __getitem__(self: Tensor[tuple[Any, Unpack[_Ts]], D], index: _int, /) -> Tensor[tuple[Unpack[_Ts]], D]: ...",
        "@overload",
        "def __getitem__(self, index: Any, /) -> Tensor[AnyShape, D]: ...",
    ]
    return out


def matmul_precise(name: str, first: str, other: str) -> list[str]:
    a = first
    return [
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[_K, _N], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M, _N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[Unpack[_Bs], _K, _N], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M, _N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[_K], D], {other}: Tensor[tuple[_K, _N], D]) -> Tensor[tuple[_N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[_K], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[_K], D], {other}: Tensor[tuple[_K], D]) -> Tensor[tuple[()], D]: ...",
    ]


def tensor_permissive() -> list[str]:
    out: list[str] = []
    for d, rule in DUNDERS.items():
        out += binary_permissive(f"__{d}__", rule, True)
        out += binary_permissive(f"__r{d}__", rule, True)
    for c in COMPARE:
        ln = binary_permissive(f"__{c}__", "bool", True)[0]
        out.append(ln + ("  # type: ignore[override]" if c in ("eq", "ne") else ""))
    for n, rule in BINARY.items():
        out += binary_permissive(n, rule, True)
    out += binary_permissive("pow", "promote", True, other="exponent")
    out += [
        "def __matmul__(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def matmul(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def mm(self, mat2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def bmm(self, mat2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def mv(self, vec: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def dot(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def inner(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def outer(self, vec2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def ger(self, vec2: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += reduction_permissive(n, rule, True)
    out += [
        "def reshape(self, *shape: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def view(self, *shape: _int | Sequence[_int] | type[DType]) -> Tensor[Any, Any]: ...",
        "def expand(self, *size: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def broadcast_to(self, size: Sequence[_int]) -> Tensor[Any, D]: ...",
        "def expand_as(self, other: Tensor[Any, Any]) -> Tensor[Any, D]: ...",
        "def flatten(self, start_dim: _int = 0, end_dim: _int = -1) -> Tensor[Any, D]: ...",
        "def unflatten(self, dim: _int, sizes: Sequence[_int]) -> Tensor[Any, D]: ...",
        "def transpose(self, dim0: _int, dim1: _int) -> Tensor[Any, D]: ...",
        "def swapdims(self, dim0: _int, dim1: _int) -> Tensor[Any, D]: ...",
        "def swapaxes(self, axis0: _int, axis1: _int) -> Tensor[Any, D]: ...",
        "def permute(self, *dims: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def movedim(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def moveaxis(self, source: _int | Sequence[_int], destination: _int | Sequence[_int]) -> Tensor[Any, D]: ...",
        "def t(self) -> Tensor[Any, D]: ...",
        "@property",
        "def mT(self) -> Tensor[Any, D]: ...",
        "@property",
        "def T(self) -> Tensor[Any, D]: ...",
        "def squeeze(self, dim: _int | Sequence[_int] | None = None) -> Tensor[Any, D]: ...",
        "def unsqueeze(self, dim: _int) -> Tensor[Any, D]: ...",
        "def select(self, dim: _int, index: _int) -> Tensor[Any, D]: ...",
        "def narrow(self, dim: _int, start: _int, length: _int) -> Tensor[Any, D]: ...",
        "def split(self, split_size_or_sections: _int | Sequence[_int], dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def chunk(self, chunks: _int, dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def unbind(self, dim: _int = 0) -> tuple[Tensor[Any, D], ...]: ...",
        "def __getitem__(self, index: Any, /) -> Tensor[Any, D]: ...",
    ]
    return out


# ---------------------------------------------------------------------------------- module functions
def functions_common() -> list[str]:
    out: list[str] = []
    for n in UNARY_SAME + KEEP:
        out.append(f"def {n}(input: Tensor[_S2, _D2]) -> Tensor[_S2, _D2]: ...")
    out.append("def clamp(input: Tensor[_S2, _D2], min: Incomplete = None, max: Incomplete = None) -> Tensor[_S2, _D2]: ...")
    out.append("def clip(input: Tensor[_S2, _D2], min: Incomplete = None, max: Incomplete = None) -> Tensor[_S2, _D2]: ...")
    for n in UNARY_FLOAT:
        out += unary_float(n, False)
    for n in UNARY_BOOL:
        out.append(f"def {n}(input: Tensor[_S2, Any]) -> Tensor[_S2, bool_]: ...")
    for n, rule in ALONG_DIM.items():
        if rule == "float":
            out += ["@overload", f"def {n}(input: Tensor[_S2, _FT], dim: _int, dtype: None = None) -> Tensor[_S2, _FT]: ...",
                    "@overload", f"def {n}(input: Tensor[_S2, Any], dim: _int, dtype: Incomplete = None) -> Tensor[_S2, Any]: ..."]
        else:
            out.append(f"def {n}(input: Tensor[_S2, Any], dim: _int, *, dtype: Incomplete = None) -> Tensor[_S2, Any]: ...")
    out += selection_ops(False)
    out += [
        "def is_tensor(obj: object) -> TypeIs[Tensor[Any, Any]]: ...",
        "def numel(input: Tensor[Any, Any]) -> _int: ...",
        "def promote_types(type1: type[DType], type2: type[DType]) -> type[DType]: ...",
        "def result_type(tensor1: Any, tensor2: Any) -> type[DType]: ...",
        "def can_cast(from_: type[DType], to: type[DType]) -> _bool: ...",
        "def broadcast_shapes(*shapes: Any) -> Size: ...",
        "def broadcast_tensors(*tensors: Tensor[Any, _D2]) -> tuple[Tensor[AnyShape, _D2], ...]: ...",
        "def get_default_dtype() -> type[DType]: ...",
        "def set_default_dtype(d: type[DType]) -> None: ...",
        "def list_ops() -> list[str]: ...",
        "def get_op_info(name: str) -> dict[str, Any]: ...",
        "def manual_seed(seed: _int) -> Incomplete: ...",
        "def tensor(data: Any, *, dtype: Incomplete = None, device: Incomplete = None, requires_grad: _bool = False) "
        "-> Tensor[AnyShape, Any]: ...",
        "def as_tensor(data: Any, dtype: Incomplete = None, device: Incomplete = None) -> Tensor[AnyShape, Any]: ...",
        "def from_numpy(ndarray: Any) -> Tensor[AnyShape, Any]: ...",
        "def reveal_shape(tensor: Tensor[Any, Any]) -> None:",
        '    """mypy+plugin: print the shape and dtype of ``tensor`` as a note. At runtime: nothing."""',
    ]
    return out


def functions_precise() -> list[str]:
    out: list[str] = []
    for n, rule in BINARY.items():
        out += binary_precise(n, rule, False)
    out += binary_precise("pow", "promote", False, other="exponent")
    out += matmul_precise("matmul", "input", "other")
    out += [
        "def mm(input: Tensor[tuple[_M, _K], _D2], mat2: Tensor[tuple[_K, _N], _D2]) -> Tensor[tuple[_M, _N], _D2]: ...",
        "def bmm(input: Tensor[tuple[_B, _M, _K], _D2], mat2: Tensor[tuple[_B, _K, _N], _D2]) "
        "-> Tensor[tuple[_B, _M, _N], _D2]: ...",
        "def mv(input: Tensor[tuple[_M, _K], _D2], vec: Tensor[tuple[_K], _D2]) -> Tensor[tuple[_M], _D2]: ...",
        "def dot(input: Tensor[tuple[_K], _D2], other: Tensor[tuple[_K], _D2]) -> Tensor[tuple[()], _D2]: ...",
        "def outer(input: Tensor[tuple[_M], _D2], vec2: Tensor[tuple[_N], _D2]) -> Tensor[tuple[_M, _N], _D2]: ...",
    ]
    for n, rule in REDUCTIONS.items():
        out += [ln.replace(", dim", ", dim").replace("(input: Tensor[Any, D]", "(input: Tensor[Any, D]")
                for ln in reduction_precise(n, rule, False)]
    out += [
        "def cat(tensors: Sequence[Tensor[Any, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ...",
        "def concat(tensors: Sequence[Tensor[Any, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ...",
        "def concatenate(tensors: Sequence[Tensor[Any, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ...",
        "def stack(tensors: Sequence[Tensor[Any, _D2]], dim: _int = 0) -> Tensor[AnyShape, _D2]: ...",
        "def where(condition: Tensor[Any, Any], input: Tensor[Any, Any] | _complex, other: Tensor[Any, Any] | _complex) "
        "-> Tensor[AnyShape, Any]: ...",
        "def einsum(equation: str, /, *operands: Tensor[Any, _D2] | Sequence[Tensor[Any, _D2]]) -> Tensor[AnyShape, _D2]: ...",
        "def rearrange(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[AnyShape, _D2]: ...",
        "def reduce(tensor: Tensor[Any, _D2], pattern: str, reduction: str, /, **axes_lengths: _int) "
        "-> Tensor[AnyShape, _D2]: ...",
        "def repeat(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[AnyShape, _D2]: ...",
    ]
    for n in ("reshape", "flatten", "unflatten", "transpose", "permute", "movedim", "squeeze", "unsqueeze", "t",
              "select", "narrow", "split", "chunk", "unbind", "broadcast_to", "swapaxes", "swapdims", "moveaxis"):
        out += _method_as_function(n, "AnyShape")
    for n in FACTORIES:
        out += sized(n, "", "Any", FACTORY_KW)
        out += sized(n, "", "_D2", FACTORY_KW_D)
    out += _factories_rest(precise=True)
    return out


def _method_as_function(name: str, shape: str) -> list[str]:
    sig = {
        "reshape": "shape: Sequence[_int]", "flatten": "start_dim: _int = 0, end_dim: _int = -1",
        "unflatten": "dim: _int, sizes: Sequence[_int]", "transpose": "dim0: _int, dim1: _int",
        "permute": "dims: Sequence[_int]",
        "movedim": "source: _int | Sequence[_int], destination: _int | Sequence[_int]",
        "moveaxis": "source: _int | Sequence[_int], destination: _int | Sequence[_int]",
        "squeeze": "dim: _int | Sequence[_int] | None = None", "unsqueeze": "dim: _int", "t": "",
        "select": "dim: _int, index: _int", "narrow": "dim: _int, start: _int, length: _int",
        "split": "split_size_or_sections: _int | Sequence[_int], dim: _int = 0", "chunk": "chunks: _int, dim: _int = 0",
        "unbind": "dim: _int = 0", "broadcast_to": "size: Sequence[_int]", "swapaxes": "axis0: _int, axis1: _int",
        "swapdims": "dim0: _int, dim1: _int",
    }[name]
    params = f"input: Tensor[Any, _D2]{', ' + sig if sig else ''}"
    ret = f"Tensor[{shape}, _D2]"
    if name in ("split", "chunk", "unbind"):
        ret = f"tuple[Tensor[{shape}, _D2], ...]"
    return [f"def {name}({params}) -> {ret}: ..."]


def _factories_rest(precise: bool) -> list[str]:
    shape1 = "tuple[Any]" if precise else "Any"
    shape2 = "tuple[Any, Any]" if precise else "Any"
    out: list[str] = []
    for n in LIKE:
        out += [
            "@overload",
            f"def {n}(input: Tensor[_S2, _D2], *, dtype: None = None, device: Incomplete = None, "
            "requires_grad: _bool = False) -> Tensor[_S2, _D2]: ...",
            "@overload",
            f"def {n}(input: Tensor[_S2, Any], *, dtype: type[_D3], device: Incomplete = None, "
            "requires_grad: _bool = False) -> Tensor[_S2, _D3]: ...",
        ]
    out += [
        "@overload",
        "def full_like(input: Tensor[_S2, _D2], fill_value: _complex, *, dtype: None = None, device: Incomplete = None, "
        "requires_grad: _bool = False) -> Tensor[_S2, _D2]: ...",
        "@overload",
        "def full_like(input: Tensor[_S2, Any], fill_value: _complex, *, dtype: type[_D3], device: Incomplete = None, "
        "requires_grad: _bool = False) -> Tensor[_S2, _D3]: ...",
        f"def full(size: Sequence[_int], fill_value: _complex, *, {FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}"
        ") -> Tensor[AnyShape, Any]: ...",
        f"def eye(n: _int, m: _int | None = None, *, {FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) "
        f"-> Tensor[{shape2}, Any]: ...",
        "def arange(start: _complex, end: _complex | None = None, step: _complex = 1, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
        "def linspace(start: _complex, end: _complex, steps: _int, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
        "def logspace(start: _complex, end: _complex, steps: _int, base: _float = 10.0, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
    ]
    return out


def functions_permissive() -> list[str]:
    out: list[str] = []
    for n, rule in BINARY.items():
        out += binary_permissive(n, rule, False)
    out += binary_permissive("pow", "promote", False, other="exponent")
    for n, other in (("matmul", "other"), ("mm", "mat2"), ("bmm", "mat2"), ("mv", "vec"), ("dot", "other"),
                     ("outer", "vec2")):
        out.append(f"def {n}(input: Tensor[Any, _D2], {other}: Tensor[Any, Any]) -> Tensor[Any, _D2]: ...")
    for n, rule in REDUCTIONS.items():
        out += reduction_permissive(n, rule, False)
    out += [  # lists of differently shaped tensors join to object under an invariant S: take Tensor[Any, Any]
        "def cat(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def concat(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def concatenate(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def stack(tensors: Sequence[Tensor[Any, Any]], dim: _int = 0) -> Tensor[Any, Any]: ...",
        "def where(condition: Tensor[Any, Any], input: Tensor[Any, Any] | _complex, other: Tensor[Any, Any] | _complex) "
        "-> Tensor[Any, Any]: ...",
        "def einsum(equation: str, /, *operands: Tensor[Any, Any] | Sequence[Tensor[Any, Any]]) -> Tensor[Any, Any]: ...",
        "def rearrange(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
        "def reduce(tensor: Tensor[Any, _D2], pattern: str, reduction: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
        "def repeat(tensor: Tensor[Any, _D2], pattern: str, /, **axes_lengths: _int) -> Tensor[Any, _D2]: ...",
    ]
    for n in ("reshape", "flatten", "unflatten", "transpose", "permute", "movedim", "squeeze", "unsqueeze", "t",
              "select", "narrow", "split", "chunk", "unbind", "broadcast_to", "swapaxes", "swapdims", "moveaxis"):
        out += _method_as_function(n, "Any")
    for n in FACTORIES:
        out += [
            "@overload",
            f"def {n}(*size: _int | Sequence[_int], {FACTORY_KW}) -> Tensor[Any, Any]: ...",
            "@overload",
            f"def {n}(*size: _int | Sequence[_int], {FACTORY_KW_D}) -> Tensor[Any, _D2]: ...",
        ]
    out += _factories_rest(precise=False)
    return out


# ---------------------------------------------------------------------------------- assembly
HEADER = '''\
# pyright: reportRedeclaration=false, reportNoOverloadImplementation=false
# GENERATED by stubs/generate_stubs.py from its op tables. Do not edit by hand.
# ruff: noqa
#
# Tensor[S, D]: S is the shape as a tuple type (invariant), D the dtype class.
#   Literal[3] a size | a Dim subclass a named size | a TypeVar a generic size | Any an unknown size
#   tuple[*tuple[Any, ...], Literal[3]] unknown leading dims | tuple[Any, ...] (AnyShape) unknown rank
#
# Three audiences read this file:
#   mypy + shapetorch_mypy : _PRECISE_STUBS is always-false -> the permissive `elif MYPY:` branch; the plugin
#                            computes shapes with the runtime's rules
#   mypy, no plugin        : mypy keeps the FIRST branch (precise overloads; fixed-rank patterns that mypy
#                            would solve to Never on an unknown rank are left out there)
#   pyright                : uses the LAST declaration, the `else:` branch (the same precise overloads)
from builtins import bool as _bool, complex as _complex, float as _float, int as _int, type as _type
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Generic, Literal as _L, NamedTuple, TypeVar, overload

from _typeshed import Incomplete
from typing_extensions import Self, TypeAlias, TypeIs, TypeVarTuple, Unpack

from . import nn as nn

MYPY: _bool
_PRECISE_STUBS: _bool

__version__: str

class DType:
    name: ClassVar[str]
    itemsize: ClassVar[_int]
    is_floating_point: ClassVar[_bool]
    is_complex: ClassVar[_bool]
    is_signed: ClassVar[_bool]
    @classmethod
    def to_real(cls) -> type[DType]: ...
    @classmethod
    def to_complex(cls) -> type[DType]: ...

'''

TAIL = '''
class Dim(_int):
    """Base class for named dims: ``class Batch(Dim): ...``. Nominal: Batch and Seq are different sizes."""

class Size(tuple[_int, ...]):
    def numel(self) -> _int: ...

class ShapetorchError(Exception):
    code: str
class ShapeError(ShapetorchError, RuntimeError): ...
class DimensionError(ShapeError, IndexError): ...
class DTypeError(ShapetorchError, TypeError): ...
class DeviceError(ShapetorchError, RuntimeError): ...
class AutogradError(ShapetorchError, RuntimeError): ...
class RegistryError(ShapetorchError): ...

def __getattr__(name: str) -> Incomplete: ...  # the rest of the public API: not typed precisely yet
'''


def _indent(lines: list[str], n: int) -> list[str]:
    return [(" " * n + ln) if ln else ln for ln in lines]


def _names(lines: list[str]) -> set[str]:
    return {ln.split("(")[0][4:] for ln in lines if ln.startswith("def ")}


def _branched(precise: list[str], permissive: list[str], indent: int, plain: dict[str, str]) -> list[str]:
    # pyright reads the last declaration of each name: a name only in the permissive branch would leak.
    missing = _names(permissive) - _names(precise)
    assert not missing, f"names only in the permissive branch: {sorted(missing)}"
    # mypy's hooks see no name for positional-only formals: the permissive branch names them all.
    permissive = [ln.replace(", /", "").replace("(/, ", "(") for ln in permissive]
    pad = " " * indent
    return [
        f"{pad}if _PRECISE_STUBS:",
        *_indent(for_mypy(precise, plain), indent + 4),
        f"{pad}elif MYPY:",
        *_indent(permissive, indent + 4),
        f"{pad}else:",
        *_indent(precise, indent + 4),
    ]


def render() -> str:
    lines = [HEADER.rstrip("\n"), ""]
    for d in DTYPES:
        lines.append(f"class {d}(DType): ...")
    lines.append("")
    for alias, cls in ALIASES.items():
        lines.append(f"{alias}: TypeAlias = {cls}")
    float_types = " | ".join(d for d in DTYPES if d.startswith(("float", "bfloat", "complex")))
    int_types = " | ".join(d for d in DTYPES if "int" in d)
    lines += [
        "",
        'S = TypeVar("S", bound=tuple[Any, ...])  # the shape: invariant on purpose',
        'D = TypeVar("D", bound=DType)',
        'AnyShape: TypeAlias = tuple[Any, ...]',
        '_S2 = TypeVar("_S2", bound=tuple[Any, ...])',
        '_D2 = TypeVar("_D2", bound=DType)',
        '_D3 = TypeVar("_D3", bound=DType)',
        '_S3 = TypeVar("_S3", bound=tuple[Any, ...])',
        f'_FT = TypeVar("_FT", bound={float_types})',
        f'_IT = TypeVar("_IT", bound={int_types})',
        '_B = TypeVar("_B")',
        '_M = TypeVar("_M")',
        '_K = TypeVar("_K")',
        '_N = TypeVar("_N")',
        '_Bs = TypeVarTuple("_Bs")',
        '_Ts = TypeVarTuple("_Ts")',
        "",
        "class _ValuesIndices(NamedTuple, Generic[_S2, _D2]):",
        '    """(values, indices) of max/min/sort/topk/kthvalue/median/mode/cummax/cummin."""',
        "    values: Tensor[_S2, _D2]",
        "    indices: Tensor[_S2, int64]",
        "",
        "class Tensor(Generic[S, D]):",
        *_indent(tensor_common(), 4),
        *_branched(tensor_precise(), tensor_permissive(), 4, FIXED_RANK_PLAIN),
        "    # ---- the rest of the registered methods (shapetorch.ops._registry.METHODS): not typed precisely yet",
        "    #REGISTRY_METHODS",
        "",
        *functions_common(),
        *_branched(functions_precise(), functions_permissive(), 0, FIXED_RANK_PLAIN_FUNCTIONS),
        TAIL.rstrip("\n"),
        "",
        "# ---- the rest of the public API (shapetorch._api.__all__ and the registered ops): not typed precisely yet",
        "#REGISTRY_FUNCTIONS",
    ]
    text = "\n".join(lines) + "\n"
    text = _registry_rest(text)
    # `Tensor.type()` shadows the builtin inside the class body: annotations use `_type[...]`.
    return text.replace(" type[", " _type[").replace("[type[", "[_type[").replace("(type[", "(_type[")


def outputs() -> dict[Path, str]:
    """Every generated stub file and its text."""
    import nn_stubs

    nn_dir = OUT.parent / "nn"
    return {
        OUT: render(),
        nn_dir / "__init__.pyi": nn_stubs.render_nn(),
        nn_dir / "functional.pyi": nn_stubs.render_functional(),
        nn_dir / "init.pyi": nn_stubs.render_loose("shapetorch.nn.init"),
        nn_dir / "utils.pyi": nn_stubs.render_loose("shapetorch.nn.utils"),
    }


def stub_names(text: str) -> tuple[set[str], set[str]]:
    """(module-level names, Tensor members) that a stub text declares, read with ``ast``."""
    import ast

    def names(body: list[ast.stmt]) -> set[str]:
        out: set[str] = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                out.add(node.target.id)
            elif isinstance(node, ast.Assign):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.ImportFrom):
                out.update(a.asname or a.name for a in node.names)
            elif isinstance(node, ast.If):
                out |= names(node.body) | names(node.orelse)
        return out

    tree = ast.parse(text)
    tensor = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor"), None)
    return names(tree.body), names(tensor.body) if tensor is not None else set()


# Runtime names the stub leaves out on purpose. `Tensor @ Tensor` is decided by __matmul__ alone: with a
# __rmatmul__ on Tensor, mypy retries a failed `a @ b` as `b.__rmatmul__(a)` and loses the result type.
NOT_STUBBED_METHODS = {"__rmatmul__"}


def runtime_names() -> tuple[set[str], set[str]]:
    """(public module names, Tensor methods) of the runtime: ``_api.__all__`` and the op registry."""
    import shapetorch._api as api
    from shapetorch.ops import _registry

    return set(api.__all__) | set(_registry.FUNCTIONS), set(_registry.METHODS) - NOT_STUBBED_METHODS


def _loose(name: str, fn: object, method: bool) -> str:
    """``def name(<the runtime's parameter names, Any>) -> Incomplete`` for an op without a template."""
    import inspect

    first = "self, " if method else ""
    try:
        params = list(inspect.signature(fn).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"def {name}({first}*args: Any, **kwargs: Any) -> Incomplete: ..."
    if method and params:
        params = params[1:]
    parts: list[str] = []
    star = False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}: Any")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}: Any")
        else:
            if p.kind is p.KEYWORD_ONLY and not star:
                parts.append("*")
                star = True
            parts.append(f"{p.name}: Any" + ("" if p.default is p.empty else " = ..."))
        if p.kind is p.POSITIONAL_ONLY and (p is params[-1] or params[params.index(p) + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    if method and parts and parts[0] == "/":
        parts = parts[1:]
    return f"def {name}({', '.join((['self'] if method else []) + parts)}) -> Incomplete: ..."


def _registry_rest(text: str) -> str:
    """Fill the two placeholders with every runtime public name the templates above did not declare."""
    import inspect

    import shapetorch._api as api
    from shapetorch.ops import _registry

    have_mod, have_tensor = stub_names(text.replace("#REGISTRY_METHODS", "pass"))
    want_mod, want_tensor = runtime_names()
    methods = []
    for name in sorted(want_tensor - have_tensor):
        methods.append("    " + _loose(name, _registry.METHODS[name], True))
    funcs = []
    for name in sorted(want_mod - have_mod):
        obj = _registry.FUNCTIONS.get(name) or getattr(api, name, None)
        if inspect.ismodule(obj) or obj is None:
            funcs.append(f"{name}: Incomplete")
        elif inspect.isclass(obj):
            funcs += [f"class {name}:", "    def __init__(self, *args: Any, **kwargs: Any) -> None: ...",
                      "    def __getattr__(self, name: str) -> Incomplete: ...",
                      "    def __call__(self, *args: Any, **kwargs: Any) -> Incomplete: ...",
                      "    def __enter__(self) -> Incomplete: ...",
                      "    def __exit__(self, *args: Any) -> None: ..."]
        elif callable(obj):
            funcs.append(_loose(name, obj, False))
        else:
            funcs.append(f"{name}: Incomplete")
    text = text.replace("    #REGISTRY_METHODS\n", "\n".join(methods) + "\n" if methods else "    pass\n")
    return text.replace("#REGISTRY_FUNCTIONS\n", "\n".join(funcs) + "\n")


def main(argv: list[str]) -> int:
    files = outputs()
    if "--check" in argv:
        stale = [str(p) for p, text in files.items() if not p.exists() or p.read_text() != text]
        if stale:
            print(f"{', '.join(stale)} stale: run python stubs/generate_stubs.py")
            return 1
        return 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (OUT.parent / "py.typed").write_text("partial\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
