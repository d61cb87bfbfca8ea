"""The public ops, one module per family. Importing this package registers every op."""

from . import conversion, creation, einops, einsum, indexing, joining, linalg, pointwise, random, reduction, views

__all__ = [
    "conversion", "creation", "einops", "einsum", "indexing", "joining", "linalg", "pointwise", "random", "reduction",
    "views",
]
