"""torch's OpInfo database as an oracle: run each SampleInput through torch and shapetorch and compare.

``check_samples(name, dtype)`` takes the OpInfo's sample inputs for ``dtype`` (converted to shapetorch with
the same values), calls ``torch.<name>`` and ``shapetorch.<name>``, and checks dtype, shape and values,
or that shapetorch raises a ShapetorchError where torch raises. ``grad_samples`` does the same for the
gradients of a float64 sample with a random cotangent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch

import shapetorch as st
from _opinfo_tables import assert_same_grad
from _oracle import assert_same, tname


@functools.cache
def op_db() -> dict[str, Any]:
    from torch.testing._internal.common_methods_invocations import op_db as db

    out: dict[str, Any] = {}
    for op in db:
        out.setdefault(op.name, op)  # the first variant of a name (the plain function)
    return out


def to_st(x: Any) -> Any:
    """A torch tensor (or a nest of them) as shapetorch, same values and dtype."""
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            return st.from_numpy(x.float().numpy().astype(ml_dtypes.bfloat16))
        return st.tensor(x.resolve_conj().resolve_neg().numpy(), dtype=getattr(st, tname(x.dtype)))
    if isinstance(x, (list, tuple)):
        return type(x)(to_st(v) for v in x)
    if isinstance(x, torch.dtype):
        return getattr(st, tname(x))
    return x


def samples(name: str, dtype: torch.dtype, requires_grad: bool = False) -> list[Any]:
    op = op_db()[name]
    return list(op.sample_inputs("cpu", dtype, requires_grad=requires_grad))


def supported(name: str) -> set[str]:
    return {tname(d) for d in op_db()[name].supported_dtypes("cpu")}


def run(fn_t: Callable[..., Any], fn_s: Callable[..., Any], sample: Any, tol: tuple[float, float] | None = None) -> None:
    t_args = [sample.input, *sample.args]
    s_args = [to_st(a) for a in t_args]
    kwargs = {k: to_st(v) for k, v in sample.kwargs.items()}
    try:
        expected = fn_t(*t_args, **sample.kwargs)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError) as e:
        with pytest.raises(st.ShapetorchError):
            fn_s(*s_args, **kwargs)
        del e
        return
    got = fn_s(*s_args, **kwargs)
    assert_same(got, expected, tol, path=f"{sample}"[:300])


def check_samples(name: str, dtype: str, tol: tuple[float, float] | None = None, method: bool = False) -> int:
    """Every OpInfo sample of ``name`` in ``dtype``; returns how many ran."""
    if method:
        def fn_t(x: Any, *a: Any, **k: Any) -> Any:
            return getattr(x, name)(*a, **k)
        fn_s = fn_t
    else:
        fn_t, fn_s = getattr(torch, name), getattr(st, name)
    ss = samples(name, getattr(torch, dtype))
    for s in ss:
        run(fn_t, fn_s, s, tol)
    return len(ss)


def grad_samples(name: str, fn: Callable[..., Any] | None = None, max_samples: int = 6, seed: int = 0) -> int:
    """Gradients of every float64 sample (tensor inputs that require grad) against torch's."""
    ss = samples(name, torch.float64, requires_grad=True)[:max_samples]
    rng = np.random.default_rng(seed)
    n = 0
    for s in ss:
        t_args = [s.input, *s.args]
        t_leaves = [a for a in t_args if isinstance(a, torch.Tensor) and a.requires_grad]
        s_args = [to_st(a) for a in t_args]
        for a, b in zip(t_args, s_args):
            if isinstance(a, torch.Tensor) and a.requires_grad:
                b.requires_grad_(True)
        s_leaves = [b for a, b in zip(t_args, s_args) if isinstance(a, torch.Tensor) and a.requires_grad]
        call_t = fn or getattr(torch, name)
        call_s = fn or getattr(st, name)
        out_t = call_t(*t_args, **s.kwargs)
        out_s = call_s(*s_args, **{k: to_st(v) for k, v in s.kwargs.items()})
        if isinstance(out_t, tuple):
            out_t, out_s = out_t[0], out_s[0]
        if not out_t.requires_grad:
            continue
        cot = np.asarray(rng.standard_normal(tuple(out_t.shape)))
        if out_t.is_complex():
            cot = np.asarray(cot + 1j * rng.standard_normal(tuple(out_t.shape)))
        gt = torch.autograd.grad(out_t, t_leaves, torch.from_numpy(cot).to(out_t.dtype), allow_unused=True)
        gs = st.autograd.grad(out_s, s_leaves, st.tensor(cot, dtype=out_s.dtype), allow_unused=True)
        for i, (a, b) in enumerate(zip(gs, gt)):
            if b is None:
                assert a is None or np.all(a.numpy() == 0), f"{name}: input {i} has a gradient, torch none"
                continue
            assert a is not None, f"{name}: input {i} has no gradient ({s})"
            assert_same_grad(a, b, f"{name} grad {i} {s}"[:300])
        n += 1
    return n
