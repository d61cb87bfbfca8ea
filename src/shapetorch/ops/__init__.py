"""The public ops, one module per family. Importing this package registers every op."""

from .. import serialization  # noqa: F401  (registers shapetorch.save / shapetorch.load)
from ..backends.webgpu import api as _webgpu_api  # noqa: F401  (is_webgpu_available, memory_stats, ...; no wgpu import)
from . import (
    activation,
    conversion,
    creation,
    einops,
    einsum,
    indexing,
    joining,
    linalg,
    nn_ops,  # after the core ops it is written in
    pointwise,
    random,
    reduction,
    views,
)

__all__ = [
    "activation", "conversion", "creation", "einops", "einsum", "indexing", "joining", "linalg", "nn_ops", "pointwise",
    "random", "reduction", "views",
]
