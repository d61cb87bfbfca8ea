"""The public ops, one module per family. Importing this package registers every op."""

from . import conversion, creation, indexing, joining, linalg, pointwise, random, reduction, views
from . import einsum, einops

__all__ = ["conversion", "creation", "indexing", "joining", "linalg", "pointwise", "random", "reduction", "views"]
