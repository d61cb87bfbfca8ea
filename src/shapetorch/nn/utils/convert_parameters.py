"""``parameters_to_vector`` / ``vector_to_parameters``, as ``torch.nn.utils.convert_parameters``."""

from __future__ import annotations

from collections.abc import Iterable

from ..._errors import fail
from ..._tensor import Tensor
from ...ops.joining import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Each parameter's ``.data`` becomes its slice of ``vec``, as in torch: a view, so the parameters share
    ``vec``'s memory afterwards (a later write to ``vec`` shows in them)."""
    if not isinstance(vec, Tensor):
        fail("argument_error_refused", op="vector_to_parameters",
             problem=f"expected torch.Tensor, but got: {type(vec).__name__}")
    i = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[i:i + n].view_as(p).data
        i += n
