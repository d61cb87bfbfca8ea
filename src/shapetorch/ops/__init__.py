"""The public ops, one module per family. Importing this package registers every op."""

from .. import serialization  # noqa: F401  (registers shapetorch.save / shapetorch.load)
from ..backends.webgpu import api as _webgpu_api  # noqa: F401  (is_webgpu_available, memory_stats, ...; no wgpu import)
from . import (
    activation,
    activation_more,
    conversion,
    creation,
    einops,
    einsum,
    fft,
    indexing,
    indexing_more,
    joining,
    linalg,
    linalg_more,
    logical_more,
    misc,  # noqa: F401  (bincount, histc, vmap, ...)
    nn_ops,  # after the core ops it is written in
    pointwise,
    pointwise_more,
    random,
    reduction,
    reduction_more,  # noqa: F401  (median, quantile, cov, ...)
    scan,  # noqa: F401  (cumsum, cumprod, diff, ...)
    shape_more,
    sorting,  # noqa: F401  (sort, topk, unique, ...)
    special,  # after activation: erf is activation's primitive
    views,
    windows,
)

__all__ = [
    "activation", "conversion", "creation", "einops", "einsum", "indexing", "joining", "linalg", "nn_ops", "pointwise",
    "random", "reduction", "views",
]
__all__ += ["activation_more", "logical_more", "pointwise_more", "special", "windows"]
__all__ += ["fft", "indexing_more", "linalg_more", "shape_more"]
