"""The public ops, one module per family. Importing this package registers every op."""

from ..backends.webgpu import api as _webgpu_api  # no wgpu import
from . import (
    _registry,
    activation,
    arithmetic,
    attention,
    comparison,
    complex,
    conversion,
    convolution,
    creation,
    einops,
    einsum,
    fft,
    indexing,
    joining,
    linalg,  # after matrix: linalg.inv is matrix's inverse
    loss,
    matmul,
    matrix,
    normalization,
    pooling,
    random,
    recurrent,
    reduction,
    scan,
    scatter,
    sorting,
    special,  # after activation: erf is activation's primitive
    statistics,
    tiling,
    unary,
    views,
    vmap,
    windows,
)

# isort: split
from . import aliases, legacy, storage, view_copies  # last: they name ops the modules above define

__all__ = [
    "activation", "arithmetic", "attention", "comparison", "complex", "conversion", "convolution", "creation", "einops", "einsum",
    "fft", "indexing", "joining", "linalg", "loss", "matmul", "matrix", "normalization", "pooling", "random", "recurrent", "reduction", "scan", "scatter", "sorting",
    "special", "statistics", "aliases", "legacy", "storage", "tiling", "unary", "view_copies", "views", "vmap", "windows",
]

# the WebGPU backend's public functions (the backend sits below the op table, so it is registered from here)
for _fn in (_webgpu_api.is_webgpu_available, _webgpu_api.require_webgpu):
    _registry.public("device", method=False)(_fn)
