"""The overload templates: the declarations of one op, for a Tensor method or a module function, by op family.
"""

from __future__ import annotations

from shapetorch._rules.dtypes import TENSOR_OPERANDS

from .render_dim_literals import reductions
from .render_pyright import broadcast_checked, mypy_only
from .tables import FACTORY_KW, LIKE, MAX_RANK


# ---------------------------------------------------------------------------------- dtypes
def dtype_of(rule: str) -> tuple[str, str]:
    """(self's dtype in the precise signature, the result dtype) for a dtype rule."""
    return {"same": ("D", "D"), "sum": ("_FT", "_FT"), "float": ("_FT", "_FT"), "int64": ("D", "int64"),
            "bool": ("D", "bool_"), "promote": ("D", "D"), "any": ("D", "Any")}[rule]


# ---------------------------------------------------------------------------------- broadcast (elementwise)
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
            *_fallback(method, [
                "@overload",
                f"def {name}({first}: Tensor[Any, Any], {other}: Tensor[Any, Any] | _complex) -> Tensor[AnyShape, bool_]: ...",
            ]),
            *(broadcast_checked(name, method, other, "bool_") if method else []),
        ]
    dt = "_FT" if rule == "float" else "_D2"
    numbers = name not in TENSOR_OPERANDS  # torch's schema takes a Python number as ``other``
    lines = [
        "@overload",
        f"def {name}({first}: Tensor[_S2, {dt}], {other}: Tensor[_S2, {dt}]) -> Tensor[_S2, {dt}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {dt}], {other}: Tensor[tuple[_N], {dt}]) "
        f"-> Tensor[tuple[Unpack[_Bs], _N], {dt}]: ...",
    ]
    if numbers:
        lines += ["@overload", f"def {name}({first}: Tensor[_S2, _FT], {other}: _float) -> Tensor[_S2, _FT]: ..."]
    if numbers and rule == "promote":
        lines += ["@overload", f"def {name}({first}: Tensor[_S2, _IT], {other}: _int) -> Tensor[_S2, _IT]: ..."]
    lines += _fallback(method, [
        "@overload",
        f"def {name}({first}: Tensor[Any, Any], {other}: Tensor[Any, Any]{' | _complex' if numbers else ''}) "
        "-> Tensor[AnyShape, Any]: ...",
    ])
    return lines + (broadcast_checked(name, method, other, "Any") if method else [])


def _fallback(method: bool, lines: list[str]) -> list[str]:
    """The catch-all overload of a binary op. pyright checks the broadcasting of methods and operators instead
    (``render_pyright.broadcast_checked``); a module function keeps it: with two protocol-typed arguments pyright
    joins the sizes of one dim into a union (``Literal[8, 3]``) instead of rejecting the call, while a method binds
    ``self``'s sizes first."""
    return mypy_only(lines) if method else lines


def binary_permissive(name: str, rule: str, method: bool, other: str = "other") -> list[str]:
    first = "self" if method else "input: Tensor[Any, Any] | _complex"
    ret = "bool_" if rule == "bool" else "Any"
    return [f"def {name}({first}, {other}: Tensor[Any, Any] | _complex) -> Tensor[Any, {ret}]: ..."]


# ---------------------------------------------------------------------------------- reduction
def reduction_precise(name: str, rule: str, method: bool) -> list[str]:
    first = "self" if method else "input"
    sd, rd = dtype_of(rule)
    lines = [
        "@overload",
        f"def {name}({first}: Tensor[Any, {sd}], dim: None = None, keepdim: _bool = False) -> Tensor[tuple[()], {rd}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {sd}], dim: _L[-1], keepdim: _L[False] = False) "
        f"-> Tensor[tuple[Unpack[_Bs]], {rd}]: ...",
        "@overload",
        f"def {name}({first}: Tensor[tuple[Unpack[_Bs], _N], {sd}], dim: _L[-1], keepdim: _L[True]) "
        f"-> Tensor[tuple[Unpack[_Bs], _L[1]], {rd}]: ...",
        *reductions(name, first, sd, rd, skip=(-1,)),
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


# ---------------------------------------------------------------------------------- matmul
def matmul_precise(name: str, first: str, other: str) -> list[str]:
    a = first
    return [
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[_K, _N], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M, _N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[Unpack[_Bs], _K, _N], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M, _N], D]: ...",
        # batch dims that broadcast ((B, 4, S, 16) @ (4, 16, 8)), or an Any operand against a batched one: a
        # TypeVarTuple cannot broadcast, so the batch dims are unknown and only the inner sizes are checked
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[Unpack[_Bs2], _K, _N], D]) "
        "-> Tensor[tuple[Unpack[tuple[Any, ...]], _M, _N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[_K], D], {other}: Tensor[tuple[_K, _N], D]) -> Tensor[tuple[_N], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[Unpack[_Bs], _M, _K], D], {other}: Tensor[tuple[_K], D]) "
        "-> Tensor[tuple[Unpack[_Bs], _M], D]: ...",
        "@overload",
        f"def {name}({a}: Tensor[tuple[_K], D], {other}: Tensor[tuple[_K], D]) -> Tensor[tuple[()], D]: ...",
    ]


# ---------------------------------------------------------------------------------- views and creation: overloads by the number of sizes
def sized(name: str, first: str, ret_dtype: str, kw: str = "") -> list[str]:
    """Overloads by the number of sizes: ``f(2, 3)`` -> ``tuple[Any, Any]`` (pyright and plain mypy)."""
    lines: list[str] = []
    kw = f", *, {kw}" if kw else ""
    for n in range(1, MAX_RANK + 1):
        params = ", ".join(f"s{i}: _Size" for i in range(n))
        ret = ", ".join(["Any"] * n)
        lines += ["@overload", f"def {name}({first}{params}, /{kw}) -> Tensor[tuple[{ret}], {ret_dtype}]: ..."]
    lines += ["@overload", f"def {name}({first}size: Sequence[_Size], /{kw}) -> Tensor[AnyShape, {ret_dtype}]: ..."]
    star_kw = kw.replace(", *, ", ", ")
    lines += ["@overload", f"def {name}({first}*size: _Size{star_kw}) -> Tensor[AnyShape, {ret_dtype}]: ..."]
    return lines


# ---------------------------------------------------------------------------------- views as module functions
def method_as_function(name: str, shape: str) -> list[str]:
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


# ---------------------------------------------------------------------------------- triu/tril and norm
def triangle_and_norm(method: bool) -> list[str]:
    """triu/tril keep the shape; norm reduces like sum (its ``p`` comes first) to a real floating result."""
    s, d = ("S", "D") if method else ("_S2", "_D2")
    first = "self" if method else f"input: Tensor[{s}, {d}]"
    out = [f"def {n}({first}, diagonal: _int = 0) -> Tensor[{s}, {d}]: ..." for n in ("triu", "tril")]
    if method:
        out += ["def triu_(self, diagonal: _int = 0) -> Self: ...", "def tril_(self, diagonal: _int = 0) -> Self: ..."]
    x = "self" if method else "input"
    p = "p: _float | str | None = 'fro'"
    out += [
        "@overload",
        f"def norm({x}: Tensor[Any, _FT], {p}, dim: None = None, keepdim: _bool = False, dtype: Incomplete = None) "
        "-> Tensor[tuple[()], _FT]: ...",
        "@overload",
        f"def norm({x}: Tensor[Any, _FT], {p}, dim: _int | Sequence[_int] | None = None, keepdim: _bool = False, "
        "dtype: Incomplete = None) -> Tensor[AnyShape, _FT]: ...",
        "@overload",
        f"def norm({x}: Tensor[Any, Any], {p}, dim: _int | Sequence[_int] | None = None, keepdim: _bool = False, "
        "dtype: Incomplete = None) -> Tensor[AnyShape, Any]: ...",
    ]
    return out


# ---------------------------------------------------------------------------------- sorting, scan, scatter, tiling, joining
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
        # the method also takes the counts as varargs (x.tile(2, 3)), torch's function only a sequence
        f"def tile(self, *dims: _int | Sequence[_int]) -> Tensor[AnyShape, {d}]: ..." if method
        else f"def tile({first}, dims: Sequence[_int]) -> Tensor[AnyShape, {d}]: ...",
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


# ---------------------------------------------------------------------------------- creation
def factories_rest(precise: bool) -> list[str]:
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
        # a bound may be a size read from .shape: a TypeVar in generic code (``st.arange(x.shape[0])``)
        "def arange(start: _complex | _Size, end: _complex | _Size | None = None, step: _complex = 1, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
        "def linspace(start: _complex, end: _complex, steps: _int, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
        "def logspace(start: _complex, end: _complex, steps: _int, base: _float = 10.0, *, "
        f"{FACTORY_KW.replace('dtype: None', 'dtype: Incomplete')}) -> Tensor[{shape1}, Any]: ...",
    ]
    return out
