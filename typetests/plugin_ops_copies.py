# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# torch's *_copy functions (hooks: the view op's, rules: _rules.views / _rules.joining / _rules.broadcast) and
# torch.gradient (hooks/scan.py, rule: _rules.scan.gradient_shapes): the same shapes and errors as the runtime.
from typing import Literal as L, reveal_type
import shapetorch as st
from shapetorch import Dim, Tensor, float32, int64

class Batch(Dim): ...

def copies(x: Tensor[tuple[Batch, L[3], L[4]], float32], c: Tensor[tuple[L[1], L[4]], float32]) -> None:
    reveal_type(st.permute_copy(x, (2, 0, 1)))  # N: Tensor[tuple[Literal[4], plugin_ops_copies.Batch, Literal[3]], shapetorch.float32]
    reveal_type(st.transpose_copy(x, 0, 2))  # N: Tensor[tuple[Literal[4], Literal[3], plugin_ops_copies.Batch], shapetorch.float32]
    reveal_type(st.t_copy(c))  # N: Tensor[tuple[Literal[4], Literal[1]], shapetorch.float32]
    reveal_type(st.squeeze_copy(c, 0))  # N: Tensor[tuple[Literal[4]], shapetorch.float32]
    reveal_type(st.unsqueeze_copy(x, 1))  # N: Tensor[tuple[plugin_ops_copies.Batch, Literal[1], Literal[3], Literal[4]], shapetorch.float32]
    reveal_type(st.expand_copy(c, (5, 4)))  # N: Tensor[tuple[Literal[5], Literal[4]], shapetorch.float32]
    reveal_type(st.view_copy(c, (2, 2)))  # N: Tensor[tuple[Literal[2], Literal[2]], shapetorch.float32]
    reveal_type(st.select_copy(x, 1, 0))  # N: Tensor[tuple[plugin_ops_copies.Batch, Literal[4]], shapetorch.float32]
    reveal_type(st.narrow_copy(x, 2, 1, 2))  # N: Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[2]], shapetorch.float32]
    reveal_type(st.detach_copy(c))  # N: Tensor[tuple[Literal[1], Literal[4]], shapetorch.float32]
    st.permute_copy(x, (0, 1))  # E: permute_copy: dims [0, 1] is not a permutation of the 3 dimensions of shape (Batch, 3, 4)  [permute_error_dimension_count_mismatch]
    st.view_copy(c, (3, 2))  # E: view_copy: shape [3, 2] is invalid for input of shape (1, 4) (4 elements)  [reshape_error_size_mismatch]
    st.transpose_copy(x, 0, 3)  # E: transpose_copy: dimension out of range (expected to be in range of [-3, 2], but got 3)  [transpose_dims_error_out_of_range]
    st.expand_copy(c, (5, 3))  # E: expand_copy: cannot expand shape (1, 4) to (5, 3): the expanded size (3) must match the existing size (4) at non-singleton dimension 1  [expand_error_incompatible]


def gradients(x: Tensor[tuple[Batch, L[3], L[4]], float32], i: Tensor[tuple[L[5]], int64],
              one: Tensor[tuple[L[2], L[1]], float32]) -> None:
    reveal_type(st.gradient(x))  # N: tuple[shapetorch.Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32], shapetorch.Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32], shapetorch.Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32]]
    reveal_type(st.gradient(x, dim=-1))  # N: tuple[shapetorch.Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32]]
    reveal_type(st.gradient(i))  # N: tuple[shapetorch.Tensor[tuple[Literal[5]], shapetorch.float32]]
    gx, gy = st.gradient(x, dim=(1, 2))
    reveal_type(gy)  # N: Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32]
    st.gradient(x, dim=(1, 1))  # E: gradient: dim 1 appears multiple times in the list of dims  [argument_error_invalid]
    st.gradient(x, dim=3)  # E: gradient: dimension out of range (expected to be in range of [-3, 2], but got 3)  [dimension_error_out_of_range]
    st.gradient(one, dim=1)  # E: gradient: torch.gradient expected each dimension size to be at least edge_order+1  [argument_error_invalid]
    st.gradient(x, dim=1, edge_order=3)  # E: gradient: torch.gradient only supports edge_order=1 and edge_order=2.  [argument_error_invalid]
    reveal_type(st.gradient(x, dim=1, edge_order=2))  # N: tuple[shapetorch.Tensor[tuple[plugin_ops_copies.Batch, Literal[3], Literal[4]], shapetorch.float32]]
