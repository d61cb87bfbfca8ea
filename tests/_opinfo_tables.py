"""torch's OpInfo database as the oracle of the scatter, tiling, matrix and fft op tests.

``values(name, fn)`` runs every sample input of an OpInfo (by name and variant) through torch and
through ``fn(lib, *args, **kwargs)`` on shapetorch tensors made from the same data, for each dtype
the OpInfo supports among a few, and checks dtype, shape and values. ``errors(name, fn)`` runs its
error inputs: shapetorch must raise a ShapetorchError where torch raises. ``grads(name, fn)``
compares the gradients of float64 samples with a random cotangent (complex outputs included).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from _oracle import assert_same, tname

Fn = Callable[..., Any]
DTYPES = ("float32", "int64", "bool", "complex64")  # float64 runs in the gradient checks


@functools.cache
def _db() -> dict[tuple[str, str], Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {(op.name, op.variant_test_name): op for op in op_db}


def opinfo(name: str, variant: str = "") -> Any:
    return _db()[(name, variant)]


def to_st(x: Any, leaves: dict[int, Any] | None = None) -> Any:
    """A nest of torch tensors as shapetorch tensors (same values and dtype); leaves that require grad
    are recorded in ``leaves`` (by the torch tensor's id) and require grad too."""
    if isinstance(x, torch.Tensor):
        t = x.detach().resolve_conj().resolve_neg()
        out = st.tensor(t.numpy().copy(), dtype=getattr(st, tname(t.dtype)))
        if leaves is not None and x.requires_grad and x.is_leaf:
            out.requires_grad_(True)
            leaves[id(x)] = out
        return out
    if isinstance(x, torch.Size):
        return tuple(x)
    if isinstance(x, (list, tuple)):
        return type(x)(to_st(v, leaves) for v in x)
    if isinstance(x, dict):
        return {k: to_st(v, leaves) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(st, tname(x))
    return x


def _call(fn: Fn, lib: Any, sample: Any, leaves: dict[int, Any] | None = None) -> Any:
    if lib is torch:
        return fn(torch, sample.input, *sample.args, **sample.kwargs)
    return fn(st, to_st(sample.input, leaves), *to_st(sample.args, leaves), **to_st(sample.kwargs, leaves))


def values(name: str, fn: Fn, variant: str = "", dtypes: tuple[str, ...] = DTYPES,
           tol: tuple[float, float] | None = None, skip: Callable[[Any], bool] | None = None) -> int:
    """Every sample in every supported dtype of ``dtypes``; returns how many ran."""
    op = opinfo(name, variant)
    ok = {tname(d) for d in op.supported_dtypes("cpu")}
    n = 0
    for dt in dtypes:
        if dt not in ok:
            continue
        for s in op.sample_inputs("cpu", getattr(torch, dt), requires_grad=False):
            if skip is not None and skip(s):
                continue
            expected = _call(fn, torch, s)
            try:
                got = _call(fn, st, s)
            except st.ShapetorchError as e:
                pytest.fail(f"{name} {dt}: torch accepted {s} but shapetorch raised [{e.code}] {e}")
            assert_same(got, expected, tol, path=f"{name} {dt} {s}"[:400])
            n += 1
    return n


def with_error_inputs(names: Any, variant: str = "") -> list[Any]:
    """The names (or (name, variant) pairs) whose OpInfo has error inputs: parametrizing over only these
    lets every error test assert that it ran cases (a parametrization that runs none cannot fail)."""
    out = []
    for entry in names:
        name, var = entry if isinstance(entry, tuple) else (entry, variant)
        op = opinfo(name, var)
        if op.error_inputs_func is not None and next(iter(op.error_inputs("cpu")), None) is not None:
            out.append(entry)
    return out


def assert_same_grad(a: Any, b: torch.Tensor, where: str, rtol: float = 1e-7, atol: float = 1e-9) -> None:
    """One gradient against torch's: shape and dtype first (numpy's allclose broadcasts a 0-d or size-1
    gradient against a full one, and ignores dtypes), then values."""
    assert tuple(a.shape) == tuple(b.shape), f"{where}: gradient shape {tuple(a.shape)}, torch {tuple(b.shape)}"
    assert str(a.dtype).rsplit(".", 1)[-1] == tname(b.dtype), f"{where}: gradient dtype {a.dtype}, torch {b.dtype}"
    np.testing.assert_allclose(a.numpy(), b.detach().resolve_conj().numpy(), rtol=rtol, atol=atol, err_msg=where)


def errors(name: str, fn: Fn, variant: str = "", codes: tuple[str, ...] | None = None) -> int:
    """The OpInfo's error inputs: torch raises, and shapetorch must raise a ShapetorchError."""
    op = opinfo(name, variant)
    if op.error_inputs_func is None:
        return 0
    n = 0
    for e in op.error_inputs("cpu"):
        s = e.sample_input
        with pytest.raises(e.error_type):
            _call(fn, torch, s)
        with pytest.raises(st.ShapetorchError) as info:
            _call(fn, st, s)
        if codes is not None:
            assert info.value.code in codes, f"{name}: {info.value.code} for {s}"
        n += 1
    return n


def _tensors(x: Any) -> list[Any]:
    if isinstance(x, (torch.Tensor, st.Tensor)):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors(v)]
    return []


def _leaves(x: Any) -> list[torch.Tensor]:
    if isinstance(x, torch.Tensor):
        return [x] if x.requires_grad and x.is_leaf else []
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _leaves(v)]
    if isinstance(x, dict):
        return [t for v in x.values() for t in _leaves(v)]
    return []


def grads(name: str, fn: Fn, variant: str = "", max_samples: int = 8, dtype: str = "float64", seed: int = 0,
          skip: Callable[[Any], bool] | None = None) -> int:
    """Gradients of the first float64 samples against torch's, with a random (complex) cotangent."""
    op = opinfo(name, variant)
    rng = np.random.default_rng(seed)
    n = 0
    for s in list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=True))[:max_samples]:
        if skip is not None and skip(s):
            continue
        t_leaves = _leaves([s.input, list(s.args), s.kwargs])
        if not t_leaves:
            continue
        leaves: dict[int, Any] = {}
        out_t = [o for o in _tensors(_call(fn, torch, s)) if o.requires_grad]
        out_s = [o for o in _tensors(_call(fn, st, s, leaves)) if o.requires_grad]
        if not out_t:
            continue
        assert len(out_t) == len(out_s), f"{name}: {len(out_s)} differentiable outputs, torch {len(out_t)}"
        cots = []
        for o in out_t:
            c = rng.standard_normal(tuple(o.shape))
            if o.is_complex():
                c = c + 1j * rng.standard_normal(tuple(o.shape))
            cots.append(c)
        gt = torch.autograd.grad(out_t, t_leaves, [torch.from_numpy(np.asarray(c)).to(o.dtype) for c, o in
                                                    zip(cots, out_t)], allow_unused=True)
        s_leaves = [leaves[id(t)] for t in t_leaves]
        gs = st.autograd.grad(out_s, s_leaves, [st.tensor(np.asarray(c), dtype=o.dtype) for c, o in zip(cots, out_s)],
                              allow_unused=True)
        for i, (a, b) in enumerate(zip(gs, gt)):
            if b is None:
                assert a is None or not np.any(a.numpy()), f"{name}: input {i} has a gradient, torch none"
                continue
            assert a is not None, f"{name}: input {i} has no gradient ({s})"
            assert_same_grad(a, b, f"{name} grad {i} {s}"[:400])
        n += 1
    return n
