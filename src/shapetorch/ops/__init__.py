"""The public ops, one module per family. Importing this package registers every op."""

from . import conversion, creation, einops, einsum, indexing, joining, linalg, pointwise, random, reduction, views
from ..backends.webgpu import api as _webgpu_api  # noqa: F401  (is_webgpu_available, memory_stats, ...; no wgpu import)
from . import activation, nn_ops  # noqa: E402  (nn ops: after the core ops they are written in)
from .. import serialization  # noqa: E402, F401  (registers shapetorch.save / shapetorch.load)

__all__ = [
    "conversion", "creation", "einops", "einsum", "indexing", "joining", "linalg", "pointwise", "random", "reduction",
    "views",
]
