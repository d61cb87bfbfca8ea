# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# einsum equations and einops patterns under mypy + shapetorch_mypy.
from typing import Final, Literal as L, reveal_type

import shapetorch as st
from shapetorch import Dim, Tensor, float32


class Batch(Dim): ...
class Seq(Dim): ...


def einsum(a: Tensor[tuple[L[2], L[3]], float32], b: Tensor[tuple[L[3], L[5]], float32],
           q: Tensor[tuple[Batch, Seq, L[64]], float32]) -> None:
    reveal_type(st.einsum("ij,jk->ik", a, b))  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(st.einsum("ij,jk", a, b))  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(st.einsum("ij->", a))  # N: Tensor[tuple[()], shapetorch.float32]
    reveal_type(st.einsum("ij,jk->ik", [a, b]))  # N: Tensor[tuple[Literal[2], Literal[5]], shapetorch.float32]
    reveal_type(st.einsum("bid,bjd->bij", q, q))  # N: Tensor[tuple[einsum_typetest.Batch, einsum_typetest.Seq, einsum_typetest.Seq], shapetorch.float32]
    st.einsum("ij,ik->jk", a, b)  # E: einsum: subscript 'i'  [einsum_error_dimension_mismatch]
    st.einsum("ij,jk->iz", a, b)  # E: einsum: output subscript 'z' of 'ij,jk->iz' does not appear in any input term; did you mean one of 'j', 'k' (the input letters the output leaves out)?  [einsum_error_unknown_output_index]
    st.einsum("ij,jk->iK", a, b)  # E: einsum: output subscript 'K' of 'ij,jk->iK' does not appear in any input term; did you mean 'k'?  [einsum_error_unknown_output_index]
    st.einsum("ij,jk->kz", a, b)  # E: einsum: output subscript 'z' of 'ij,jk->kz' does not appear in any input term; did you mean one of 'i', 'j' (the input letters the output leaves out)?  [einsum_error_unknown_output_index]
    st.einsum("ij,j->z", a, b[0])  # E: einsum: output subscript 'z' of 'ij,j->z' does not appear in any input term; did you mean one of 'i', 'j' (the input letters the output leaves out)?  [einsum_error_unknown_output_index]
    st.einsum("ij->iz", a)  # E: einsum: output subscript 'z' of 'ij->iz' does not appear in any input term; did you mean 'j'?  [einsum_error_unknown_output_index]
    st.einsum("ij,jk->ik", a)  # E: 2 input terms but 1 operands  [einsum_error_operand_count_mismatch]
    st.einsum("i1", a)  # E: invalid equation  [einsum_error_invalid_equation]
    EQ: Final = "ij,jk->ki"
    reveal_type(st.einsum(EQ, a, b))  # N: Tensor[tuple[Literal[5], Literal[2]], shapetorch.float32]
    eq = "ij,jk->ki"
    reveal_type(st.einsum(eq, a, b))  # N: Tensor[Any, Any]


def einops(x: Tensor[tuple[Batch, L[12], L[5]], float32]) -> None:
    reveal_type(st.rearrange(x, "b (h w) c -> b h w c", h=4))  # N: Tensor[tuple[einsum_typetest.Batch, Literal[4], Literal[3], Literal[5]], shapetorch.float32]
    H: Final = 4
    reveal_type(st.rearrange(x, "b (h w) c -> b h w c", h=H))  # N: Tensor[tuple[einsum_typetest.Batch, Literal[4], Literal[3], Literal[5]], shapetorch.float32]
    h = 4
    reveal_type(st.rearrange(x, "b (h w) c -> b h w c", h=h))  # N: Tensor[tuple[einsum_typetest.Batch, Any, Any, Literal[5]], shapetorch.float32]
    reveal_type(st.rearrange(x, "b s c -> b (s c)"))  # N: Tensor[tuple[einsum_typetest.Batch, Literal[60]], shapetorch.float32]
    reveal_type(st.reduce(x, "b s c -> b c", "mean"))  # N: Tensor[tuple[einsum_typetest.Batch, Literal[5]], shapetorch.float32]
    reveal_type(st.repeat(x, "b s c -> b s c r", r=2))  # N: Tensor[tuple[einsum_typetest.Batch, Literal[12], Literal[5], Literal[2]], shapetorch.float32]
    st.rearrange(x, "b (h w) c -> b h w c", h=5)  # E: rearrange:  [einops_error_dimension_mismatch]
    st.rearrange(x, "a b c d -> a b c d")  # E: rearrange:  [einops_error_dimension_mismatch]
    st.rearrange(x, "b h w c -> b c")  # E: axis 'h' appears on the left side only  [einops_error_undefined_axis]
    st.reduce(x, "b s c -> b c", "median")  # E: unknown reduction 'median'  [einops_error_invalid_pattern]
    st.rearrange(x, "b s c -> b s d")  # E: rearrange:  [einops_error_undefined_axis]
    st.repeat(x, "b s c -> b s c r")  # E: repeat:  [einops_error_repeat_missing_size]
