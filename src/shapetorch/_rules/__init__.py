"""The shape and dtype rules: pure functions over shapes, shared by the runtime and the mypy plugin.

One module per op family, named as the family's module in ``shapetorch.ops`` and the plugin's hooks
(``views``, ``joining``, ``reduction``, ``scatter``, ``tiling``, ``matrix``, ...).

Standard library only (a test enforces it in a subprocess). Each rule takes shapes made of ints,
:class:`Sym` and :data:`UNKNOWN`, returns the output shape, and raises :class:`RuleError` with a
catalogue code on a real contradiction.
"""

from .axes import wrap_dim, wrap_dims
from .broadcast import broadcast_pair, broadcast_shapes, expand_shape
from .dims import UNKNOWN, Dim, Shape, Sym, dim_div, dim_mul, fmt_shape, prod
from .dtypes import DTYPES, promote_types, result_type
from .errors import CATALOGUE, RuleError, did_you_mean
from .indexing import TensorIndex, index_shape, setitem_value_shape, slice_length
from .joining import (
    cat_shape,
    chunk_sizes,
    narrow_shape,
    select_shape,
    split_sizes,
    stack_shape,
    tensor_split_bounds,
    unbind_shapes,
)
from .matmul import bmm_shape, dot_shape, matmul_shape, mm_shape, mv_shape, outer_shape
from .reduction import reduce_dims, reduce_shape
from .scatter import gather_shape, index_select_shape, scatter_check
from .views import (
    flatten_shape,
    matrix_transpose_shape,
    movedim_shape,
    permute_shape,
    reshape_shape,
    squeeze_shape,
    t_shape,
    transpose_shape,
    unflatten_shape,
    unsqueeze_shape,
)

__all__ = [
    "CATALOGUE", "DTYPES", "UNKNOWN", "Dim", "RuleError", "Shape", "Sym", "TensorIndex",
    "bmm_shape", "broadcast_pair", "broadcast_shapes", "cat_shape", "chunk_sizes", "did_you_mean", "dim_div",
    "dim_mul", "dot_shape", "expand_shape", "flatten_shape", "fmt_shape", "gather_shape", "index_select_shape",
    "index_shape", "matmul_shape", "matrix_transpose_shape", "mm_shape", "movedim_shape", "mv_shape",
    "narrow_shape", "outer_shape", "permute_shape", "prod", "promote_types", "reduce_dims", "reduce_shape",
    "reshape_shape", "result_type", "scatter_check", "select_shape", "setitem_value_shape", "slice_length",
    "split_sizes", "squeeze_shape", "stack_shape", "t_shape", "tensor_split_bounds", "transpose_shape",
    "unbind_shapes", "unflatten_shape", "unsqueeze_shape", "wrap_dim", "wrap_dims",
]
