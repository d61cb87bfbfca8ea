"""Second-order gradients where torch's first-order gradient is a native backward op that takes the input
(pooling, the relu family, the shrinks, threshold): with create_graph the gradient requires grad even where its
values do not depend on the input's, and differentiating it gives the input zeros, not None; and where torch's
does not take the input (interpolation, a pool to one element per map, which is a mean), no graph is made. Plus
logit(x, eps)'s second derivative (NaN everywhere before: the vjp's NaN branch was ``x * nan``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
import shapetorch.nn.functional as F
from _nn_oracle import close

_POOLS = [
    ("avg_pool1d", (1, 2, 6), {"kernel_size": 2}),
    ("avg_pool2d", (1, 2, 4, 4), {"kernel_size": 2}),
    ("avg_pool2d", (2, 4, 5), {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("avg_pool3d", (1, 1, 4, 4, 4), {"kernel_size": 2}),
    ("adaptive_avg_pool1d", (1, 2, 6), {"output_size": 4}),
    ("adaptive_avg_pool2d", (1, 2, 4, 4), {"output_size": 3}),
    ("adaptive_avg_pool2d", (1, 2, 4, 4), {"output_size": 1}),  # torch: a mean, whose gradient takes no input
    ("adaptive_avg_pool3d", (1, 1, 4, 4, 4), {"output_size": 3}),
    ("max_pool1d", (1, 2, 6), {"kernel_size": 2}),
    ("max_pool2d", (1, 2, 4, 4), {"kernel_size": 2}),
    ("max_pool2d", (1, 2, 5, 5), {"kernel_size": 3, "stride": 1, "padding": 1}),
    ("max_pool3d", (1, 1, 4, 4, 4), {"kernel_size": 2}),
    ("adaptive_max_pool1d", (1, 2, 6), {"output_size": 3}),
    ("adaptive_max_pool2d", (1, 2, 4, 4), {"output_size": 3}),
    ("adaptive_max_pool3d", (1, 1, 4, 4, 4), {"output_size": 3}),
    ("fractional_max_pool2d", (1, 2, 5, 5), {"kernel_size": 2, "output_size": 3,
                                             "_random_samples": np.array([[[0.3, 0.6], [0.1, 0.9]]])}),
    ("lp_pool2d", (1, 2, 4, 4), {"norm_type": 2, "kernel_size": 2}),
    ("relu", (2, 5), {}), ("leaky_relu", (2, 5), {}), ("hardtanh", (2, 5), {}), ("relu6", (2, 5), {}),
    ("hardshrink", (2, 5), {}), ("softshrink", (2, 5), {}), ("threshold", (2, 5), {"threshold": 0.1, "value": 2.0}),
    ("pad", (1, 2, 4), {"pad": (1, 2), "mode": "reflect"}), ("pad", (1, 1, 3, 4), {"pad": (1, 1, 1, 1), "mode": "replicate"}),
    ("pad", (1, 2, 4), {"pad": (1, 2), "mode": "circular"}), ("pad", (1, 2, 4), {"pad": (1, 2)}),
    ("prelu", (2, 5), {"weight": np.array([0.25])}),
    ("interpolate", (1, 2, 4), {"scale_factor": 2, "mode": "linear"}),
    ("interpolate", (1, 1, 3, 3), {"scale_factor": 2, "mode": "bilinear"}),
]


def _arg(lib: object, v: object) -> object:
    return lib.tensor(v) if isinstance(v, np.ndarray) else v  # type: ignore[attr-defined]


def _second_order(lib: object, fl: object, name: str, x0: np.ndarray, kw: dict[str, object]) -> tuple[object, ...]:
    """(whether the create_graph gradient requires grad, the input's gradient of its sum (None when unused),
    the cotangent's gradient of <gradient, x>)."""
    x = lib.tensor(x0, requires_grad=True)  # type: ignore[attr-defined]
    y = getattr(fl, name)(x, **{k: _arg(lib, v) for k, v in kw.items()})
    go = lib.ones_like(y).requires_grad_()  # type: ignore[attr-defined]
    g, = lib.autograd.grad(y, x, go, create_graph=True)  # type: ignore[attr-defined]
    gg = lib.autograd.grad(g.sum(), x, allow_unused=True, retain_graph=True)[0] if g.requires_grad else None
    ggo = lib.autograd.grad((g * x.detach()).sum(), go)[0]  # type: ignore[attr-defined]
    return g.requires_grad, gg, ggo


@pytest.mark.parametrize("name,shape,kw", _POOLS, ids=[f"{p[0]}-{len(p[1])}d-{i}" for i, p in enumerate(_POOLS)])
def test_second_order_gradient_as_torch(name: str, shape: tuple[int, ...], kw: dict[str, object]) -> None:
    x0 = (np.arange(math.prod(shape), dtype=np.float64).reshape(shape) * 0.37) % 1.3 - 0.6
    rs, gs, ggs = _second_order(st, F, name, x0, kw)
    rt, gt, ggt = _second_order(torch, TF, name, x0, kw)
    assert rs == rt, f"the create_graph gradient's requires_grad: {rs}, torch {rt}"
    assert (gs is None) == (gt is None), f"the second-order gradient: {gs}, torch {gt}"
    if gt is not None:
        close(gs, gt, 1e-9)
    close(ggs, ggt, 1e-9)


def test_logit_eps_second_derivative_as_torch() -> None:
    # (not 0 or 1 exactly: with eps, torch's second derivative there is its where's 0 * inf, NaN, ours 0)
    x0 = np.array([0.3, -1.2, 0.7, 2.1, 0.1, 0.9, 0.5, 0.05, 0.97])
    xs, xt = st.tensor(x0, requires_grad=True), torch.tensor(x0, requires_grad=True)
    for eps in (0.1, None):
        gs, = st.autograd.grad(st.logit(xs, eps).sum(), xs, create_graph=True)
        gt, = torch.autograd.grad(torch.logit(xt, eps).sum(), xt, create_graph=True)
        close(gs, gt, 1e-9)
        close(st.autograd.grad(gs.sum(), xs)[0], torch.autograd.grad(gt.sum(), xt)[0], 1e-9)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_second_order_as_torch(reduction: str, weighted: bool) -> None:
    """nll_loss is linear in its input, but torch's gradient is its native NllLossBackward (it takes the input):
    with create_graph the gradient requires grad and its own gradient is zeros."""
    x0 = (np.arange(12, dtype=np.float64).reshape(3, 4) * 0.37) % 1.3 - 0.6
    out = []
    for lib, fl in ((st, F), (torch, TF)):
        x = lib.tensor(x0, requires_grad=True)  # type: ignore[attr-defined]
        w = lib.tensor([1.0, 2.0, 0.5, 1.5], dtype=lib.float64) if weighted else None  # type: ignore[attr-defined]
        y = fl.nll_loss(x, lib.tensor([0, 3, 1]), weight=w, reduction=reduction)  # type: ignore[attr-defined]
        g, = lib.autograd.grad(y.sum(), x, create_graph=True)  # type: ignore[attr-defined]
        gg = lib.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else None  # type: ignore[attr-defined]
        out.append((y.grad_fn.name(), g.requires_grad, g.detach().numpy(), gg))
    (ns, rs, gs, ggs), (nt, rt, gt, ggt) = out
    assert (ns, rs) == (nt, rt)
    np.testing.assert_allclose(gs, gt, atol=1e-12)
    assert (ggs is None) == (ggt is None)
    if ggt is not None:
        close(ggs, ggt, 1e-12)
