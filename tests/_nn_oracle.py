"""Helpers for the nn tests: copy a torch module's state into a shapetorch module, run both on the same
data, and compare outputs and gradients (inputs and parameters)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

import shapetorch as st


def to_st(t: torch.Tensor) -> st.Tensor:
    return st.from_numpy(t.detach().numpy().copy())


def copy_state(sm: Any, tm: torch.nn.Module) -> None:
    sm.load_state_dict({k: to_st(v) for k, v in tm.state_dict().items()})


def close(a: Any, b: Any, atol: float = 1e-6, rtol: float = 1e-5, what: str = "") -> None:
    an = a.detach().numpy() if isinstance(a, st.Tensor) else np.asarray(a)
    bn = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert an.shape == bn.shape, f"{what}: shape {an.shape} != {bn.shape}"
    np.testing.assert_allclose(an, bn, atol=atol, rtol=rtol, err_msg=what)


def first(out: Any) -> Any:
    return out[0] if isinstance(out, tuple) else out


def compare_module(sm: Any, tm: torch.nn.Module, inputs: list[np.ndarray], *, atol: float = 1e-8,
                   grad_inputs: bool = True, seed: int = 0) -> None:
    """Run both modules (float64 data) on ``inputs``; compare outputs, input gradients, parameter gradients."""
    copy_state(sm, tm)
    xs = [st.tensor(x, requires_grad=grad_inputs and x.dtype.kind == "f") for x in inputs]
    xt = [torch.tensor(x, requires_grad=grad_inputs and x.dtype.kind == "f") for x in inputs]
    ys, yt = first(sm(*xs)), first(tm(*xt))
    close(ys, yt, atol, what="output")
    cot = np.random.default_rng(seed).normal(size=tuple(yt.shape))
    ys.backward(st.tensor(cot, dtype=ys.dtype))
    yt.backward(torch.tensor(cot, dtype=yt.dtype))
    for i, (a, b) in enumerate(zip(xs, xt)):
        if b.grad is not None:
            close(a.grad, b.grad, atol, what=f"grad of input {i}")
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None or not p.grad.numpy().any(), name
        else:
            close(p.grad, tp[name].grad, atol, what=f"grad of {name}")
    for name, b in sm.named_buffers():
        close(b, dict(tm.named_buffers())[name], atol, what=f"buffer {name}")
