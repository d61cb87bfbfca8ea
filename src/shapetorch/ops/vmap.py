"""``vmap`` is a loop: the function runs once per batch element, on that element's slices, and the
results are stacked. It composes with autograd because it is written in select and stack.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from .._tensor import Tensor
from ._registry import public

# -- vmap ---------------------------------------------------------------------------------------------------

def _flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """Leaves of nested tuples/lists/dicts, and a function that rebuilds the structure from new leaves."""
    if isinstance(tree, (tuple, list)):
        parts = [_flatten(t) for t in tree]
        leaves = [leaf for p in parts for leaf in p[0]]

        def build_seq(new: list[Any]) -> Any:
            out, i = [], 0
            for p_leaves, p_build in parts:
                out.append(p_build(new[i:i + len(p_leaves)]))
                i += len(p_leaves)
            if isinstance(tree, tuple):
                return type(tree)(*out) if hasattr(tree, "_fields") else tuple(out)
            return out

        return leaves, build_seq
    if isinstance(tree, dict):
        keys = list(tree)
        dparts = [_flatten(tree[k]) for k in keys]
        dleaves = [leaf for p in dparts for leaf in p[0]]

        def build_dict(new: list[Any]) -> Any:
            out, i = {}, 0
            for k, (p_leaves, p_build) in zip(keys, dparts):
                out[k] = p_build(new[i:i + len(p_leaves)])
                i += len(p_leaves)
            return out

        return dleaves, build_dict
    return [tree], lambda new: new[0]


def _dims_for(dims: Any, tree: Any, what: str) -> list[Any]:
    """One dim (or None) per leaf of ``tree``: an int/None applies to all leaves, a structure matches it."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree)[0])
    if isinstance(dims, (tuple, list)):
        if not isinstance(tree, (tuple, list)) or len(dims) != len(tree):
            raise ValueError(f"vmap: {what}={dims!r} is not compatible with the structure of the "
                             f"{'inputs' if what == 'in_dims' else 'outputs'} ({type(tree).__name__} of "
                             f"{len(tree) if isinstance(tree, (tuple, list)) else 1})")
        return [d for sub_d, sub_t in zip(dims, tree) for d in _dims_for(sub_d, sub_t, what)]
    if isinstance(dims, dict):
        if not isinstance(tree, dict) or set(dims) != set(tree):
            raise ValueError(f"vmap: {what}={dims!r} is not compatible with the structure of the inputs")
        return [d for k in tree for d in _dims_for(dims[k], tree[k], what)]
    raise ValueError(f"vmap: {what} must be an int, None or a (nested) tuple/list/dict of them, got {dims!r}")


def _mapped_dim(dim: int, t: Tensor) -> int:
    n = t._data.ndim
    if not -n <= dim < n:
        raise ValueError(f"vmap: Tried to map over dim {dim} of a tensor with {n} dims (shape "
                         f"{tuple(t._data.shape)}); expected in_dim in [{-n}, {n})")
    return dim + n if dim < 0 else dim


@public("misc", method=False)
def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """torch.func.vmap by a loop: ``func`` runs once per batch element and the outputs are stacked.

    ``in_dims`` gives, per positional argument (or per leaf of nested tuples/lists/dicts), the dim
    to map over or None (not mapped); ``out_dims`` where the batch dim goes in each output. Keyword
    arguments are passed unmapped. Because it is a loop, it costs one call per batch element and
    any function of tensors works, random ops included (``randomness='same'`` replays the RNG state
    for each element; 'error' and 'different' both draw fresh numbers per element); ``chunk_size``
    is accepted and has no effect. Gradients flow through (it is written in select and stack).
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        from .joining import stack
        from .random import _snapshot

        if isinstance(in_dims, int) or in_dims is None:
            dims = _dims_for(in_dims, args, "in_dims")
        elif isinstance(in_dims, (tuple, list)):
            dims = _dims_for(tuple(in_dims), args, "in_dims")
        else:
            raise ValueError(f"vmap: expected in_dims to be an int or a tuple, got {type(in_dims).__name__}")
        leaves, build = _flatten(args)
        size: int | None = None
        mapped: list[Any] = []
        for leaf, d in zip(leaves, dims):
            if d is None:
                mapped.append(None)
                continue
            if not isinstance(leaf, Tensor):
                raise ValueError(f"vmap: Got in_dim={d} for an input but the input is of type {type(leaf).__name__}. "
                                 "We cannot vmap over non-Tensor arguments; use None as the in_dim for it.")
            ax = _mapped_dim(d, leaf)
            n = leaf._data.shape[ax]
            if size is not None and n != size:
                raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got "
                                 f"sizes {size} and {n} for the mapped dimension")
            size = n
            mapped.append(ax)
        if size is None:
            raise ValueError("vmap: at least one input must be mapped over (got in_dims that are all None, "
                             "or no tensor inputs)")
        if size == 0:
            raise ValueError("vmap: the mapped dimension has size 0; a loop cannot infer the output")
        restore = _snapshot() if randomness == "same" else None
        results = []
        for i in builtins.range(size):
            if restore is not None:
                restore()
            new = [leaf if ax is None else leaf.select(ax, i) for leaf, ax in zip(leaves, mapped)]
            results.append(func(*build(new), **kwargs))
        out_leaves0, out_build = _flatten(results[0])
        odims = _dims_for(out_dims, results[0], "out_dims")
        per_leaf = [_flatten(r)[0] for r in results]
        stacked = []
        for j, (leaf0, od) in enumerate(zip(out_leaves0, odims)):
            if od is None:
                stacked.append(leaf0)
                continue
            if not isinstance(leaf0, Tensor):
                raise ValueError(f"vmap: `{getattr(func, '__name__', 'func')}` must only return Tensors, got type "
                                 f"{type(leaf0).__name__}")
            col = [p[j] for p in per_leaf]
            rank = leaf0._data.ndim + 1
            if not -rank <= od < rank:
                raise ValueError(f"vmap: out_dim {od} is out of range for an output of rank {rank - 1}")
            stacked.append(stack(col, od))
        return out_build(stacked)

    wrapped.__name__ = f"vmap({getattr(func, '__name__', 'func')})"
    wrapped.__doc__ = func.__doc__
    return wrapped
