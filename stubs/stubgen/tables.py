"""The stub generator's op tables, and the names that the runtime has and that a stub declares.

The binary ops and the bool ops are the plugin's tables (``shapetorch_mypy.table``): one list for both.
"""

from __future__ import annotations

from shapetorch_mypy.table import BINARY as PLUGIN_BINARY
from shapetorch_mypy.table import UNARY_BOOL as PLUGIN_UNARY_BOOL

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

# ---------------------------------------------------------------------------------- names
# Runtime names the stub leaves out on purpose. `Tensor @ Tensor` is decided by __matmul__ alone: with a
# __rmatmul__ on Tensor, mypy retries a failed `a @ b` as `b.__rmatmul__(a)` and loses the result type.
NOT_STUBBED_METHODS = {"__rmatmul__"}


def runtime_names() -> tuple[set[str], set[str]]:
    """(public module names, Tensor methods) of the runtime: ``_api.__all__`` and the op registry."""
    import shapetorch._api as api
    import shapetorch.nn.toplevel  # noqa: F401  (torch.conv2d, ...: public names registered with nn)
    from shapetorch.ops import _registry

    return set(api.__all__) | set(_registry.FUNCTIONS), set(_registry.METHODS) - NOT_STUBBED_METHODS


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
