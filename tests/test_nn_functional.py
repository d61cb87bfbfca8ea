"""nn.functional against torch: losses (values and input gradients), pad, interpolate, attention, one_hot,
double backward through conv, and the shape errors (codes) for bad shapes, agreeing with torch's accept/reject."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import example, given
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.nn.functional as F
from _nn_oracle import close
from _oracle import fast  # noqa: I001
from shapetorch import nn


def data(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=shape)


def both(fn_s, fn_t, arrays, grad=(0,), atol=1e-9, **kw):
    """fn_s(*st tensors) vs fn_t(*torch tensors): value, and the gradients of the inputs listed in ``grad``."""
    xs = [st.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    xt = [torch.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
    ys, yt = fn_s(*xs), fn_t(*xt)
    close(ys, yt, atol, what="value")
    if grad:
        cot = data(*yt.shape, seed=9)
        ys.backward(st.tensor(cot))
        yt.backward(torch.tensor(cot))
        for i in grad:
            close(xs[i].grad, xt[i].grad, atol, what=f"grad {i}")


LOGITS = data(6, 4)
TARGET = np.array([0, 3, 1, -100, 2, 3])
W = np.abs(data(4, seed=3)) + 0.1


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"label_smoothing": 0.2}, {"weight": True, "label_smoothing": 0.1}])
def test_cross_entropy_class_targets(reduction, kw):
    def run(lib_f, mk):
        def f(x):
            extra = {"label_smoothing": kw.get("label_smoothing", 0.0)}
            if kw.get("weight"):
                extra["weight"] = mk(W)
            return lib_f(x, mk(TARGET), reduction=reduction, **extra)
        return f
    both(run(F.cross_entropy, st.tensor), run(TF.cross_entropy, torch.tensor), [LOGITS])


def test_cross_entropy_k_dims_prob_targets_and_unbatched():
    x, t = data(2, 3, 4, 5), np.random.default_rng(1).integers(0, 3, (2, 4, 5))
    both(lambda a: F.cross_entropy(a, st.tensor(t)), lambda a: TF.cross_entropy(a, torch.tensor(t)), [x])
    p = np.random.default_rng(2).dirichlet(np.ones(4), 6)
    both(lambda a: F.cross_entropy(a, st.tensor(p), label_smoothing=0.1),
         lambda a: TF.cross_entropy(a, torch.tensor(p), label_smoothing=0.1), [LOGITS])
    both(lambda a: F.cross_entropy(a, st.tensor(2)), lambda a: TF.cross_entropy(a, torch.tensor(2)), [data(4)])


def test_nll_loss_and_module():
    lp = np.log(np.random.default_rng(0).dirichlet(np.ones(4), 6))
    both(lambda a: nn.NLLLoss(weight=st.tensor(W), ignore_index=-100)(a, st.tensor(TARGET)),
         lambda a: torch.nn.NLLLoss(weight=torch.tensor(W))(a, torch.tensor(TARGET)), [lp])


@pytest.mark.parametrize("name,kwargs", [
    ("mse_loss", {}), ("l1_loss", {"reduction": "sum"}), ("smooth_l1_loss", {"beta": 0.5}),
    ("huber_loss", {"delta": 0.7}), ("smooth_l1_loss", {"reduction": "none"}),
])
def test_regression_losses(name, kwargs):
    both(lambda a, b: getattr(F, name)(a, b, **kwargs), lambda a, b: getattr(TF, name)(a, b, **kwargs),
         [data(3, 4), data(3, 4, seed=1)], grad=(0, 1))


def test_binary_losses_and_kl():
    p = 1 / (1 + np.exp(-data(3, 4)))
    t = np.random.default_rng(1).random((3, 4))
    w = np.abs(data(3, 4, seed=2))
    both(lambda a: F.binary_cross_entropy(a, st.tensor(t), weight=st.tensor(w)),
         lambda a: TF.binary_cross_entropy(a, torch.tensor(t), weight=torch.tensor(w)), [p])
    pw = np.abs(data(4, seed=4))
    both(lambda a: nn.BCEWithLogitsLoss(pos_weight=st.tensor(pw))(a, st.tensor(t)),
         lambda a: torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw))(a, torch.tensor(t)), [data(3, 4) * 5])
    q = np.random.default_rng(3).dirichlet(np.ones(4), 3)
    q[0, 1] = 0.0
    lp = np.log(np.random.default_rng(4).dirichlet(np.ones(4), 3))
    for red in ("batchmean", "sum", "none"):
        both(lambda a, red=red: F.kl_div(a, st.tensor(q), reduction=red),
             lambda a, red=red: TF.kl_div(a, torch.tensor(q), reduction=red), [lp])
    both(lambda a: nn.KLDivLoss(reduction="batchmean", log_target=True)(a, st.tensor(lp)),
         lambda a: torch.nn.KLDivLoss(reduction="batchmean", log_target=True)(a, torch.tensor(lp)), [lp[::-1].copy()])


@pytest.mark.parametrize("mode,pad", [("constant", (1, 2)), ("constant", (1, -1, 2, 0)), ("reflect", (2, 1, 1, 2)),
                                      ("replicate", (3, 0, 1, 1)), ("circular", (1, 2, 2, 1))])
def test_pad(mode, pad):
    both(lambda a: F.pad(a, pad, mode=mode), lambda a: TF.pad(a, pad, mode=mode), [data(2, 3, 4, 5)])


@pytest.mark.parametrize("kw", [
    {"size": (7, 5), "mode": "nearest"}, {"scale_factor": 2, "mode": "nearest"},
    {"size": (7, 3), "mode": "bilinear", "align_corners": False},
    {"size": (7, 9), "mode": "bilinear", "align_corners": True},
    {"scale_factor": 1.5, "mode": "bilinear"}, {"size": (5, 6), "mode": "nearest-exact"},
])
def test_interpolate(kw):
    both(lambda a: F.interpolate(a, **kw), lambda a: TF.interpolate(a, **kw), [data(2, 3, 4, 5)])


def test_interpolate_linear_1d():
    both(lambda a: F.interpolate(a, size=9, mode="linear"), lambda a: TF.interpolate(a, size=9, mode="linear"),
         [data(2, 3, 4)])


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"}, {"scale": 0.3}])
def test_scaled_dot_product_attention(kw):
    q, k, v = data(2, 3, 4, 8), data(2, 3, 6, 8, seed=1), data(2, 3, 6, 5, seed=2)
    mask = kw.pop("mask", None)
    m = None
    if mask == "bool":
        m = np.random.default_rng(5).random((4, 6)) > 0.3
        m[:, 0] = True
    elif mask == "float":
        m = data(4, 6, seed=6)
    both(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, None if m is None else st.tensor(m), **kw),
         lambda a, b, c: TF.scaled_dot_product_attention(a, b, c, None if m is None else torch.tensor(m), **kw),
         [q, k, v], grad=(0, 1, 2))


def test_one_hot_normalize_cosine_embedding_functional():
    t = np.array([[0, 2], [1, 3]])
    assert F.one_hot(st.tensor(t), 5).tolist() == TF.one_hot(torch.tensor(t), 5).tolist()
    assert F.one_hot(st.tensor(t)).shape == (2, 2, 4)
    both(lambda a: F.normalize(a, dim=1), lambda a: TF.normalize(a, dim=1), [data(3, 4)])
    both(F.cosine_similarity, TF.cosine_similarity, [data(3, 4), data(3, 4, seed=1)],
         grad=(0, 1))


def test_conv_double_backward():
    x, w = data(2, 3, 6, 6), data(4, 3, 3, 3, seed=1)
    xs, ws = st.tensor(x, requires_grad=True), st.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    gs = st.autograd.grad(F.conv2d(xs, ws, stride=2, padding=1).pow(2).sum(), [xs, ws], create_graph=True)
    gt = torch.autograd.grad(TF.conv2d(xt, wt, stride=2, padding=1).pow(2).sum(), [xt, wt], create_graph=True)
    (gs[0].pow(2).sum() + gs[1].sum()).backward()
    (gt[0].pow(2).sum() + gt[1].sum()).backward()
    close(xs.grad, xt.grad, 1e-8)
    close(ws.grad, wt.grad, 1e-8)


@pytest.mark.parametrize("cin,cout", [(4, 8), (8, 4)])  # the input gradient takes another path when cout <= cin
@pytest.mark.parametrize("nd,groups,stride,padding,dilation", [
    (1, 1, 1, 0, 1), (1, 2, 2, 1, 2), (2, 1, 1, 1, 1), (2, 2, 2, 0, 2), (2, 4, 1, 2, 1), (2, 1, 1, 3, 1),
    (3, 1, 2, 1, 1), (3, 2, 1, 0, 2),
])
def test_conv_values_gradients_and_double_backward(nd, groups, stride, padding, dilation, cin, cout):
    """The im2col kernels (one GEMM per group) against torch: output, both gradients, and a second order."""
    size = (7,) * nd if nd < 3 else (5,) * nd
    x, w = data(2, cin, *size), data(cout, cin // groups, *(3,) * nd, seed=1)
    kw = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    xs, ws = st.tensor(x, requires_grad=True), st.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ys, yt = getattr(F, f"conv{nd}d")(xs, ws, **kw), getattr(TF, f"conv{nd}d")(xt, wt, **kw)
    close(ys, yt, 1e-10)
    gs = st.autograd.grad(ys.pow(2).sum(), [xs, ws], create_graph=True)
    gt = torch.autograd.grad(yt.pow(2).sum(), [xt, wt], create_graph=True)
    close(gs[0], gt[0], 1e-9)
    close(gs[1], gt[1], 1e-9)
    (gs[0].pow(2).sum() + gs[1].pow(2).sum()).backward()
    (gt[0].pow(2).sum() + gt[1].pow(2).sum()).backward()
    close(xs.grad, xt.grad, 1e-8)
    close(ws.grad, wt.grad, 1e-8)


# the padded-grid kernels (stride 1, one group): every kernel offset folded into one GEMM (few channels), the
# trailing offsets folded (more channels), the weight gradient on the grid (channels x trailing taps >= 48),
# dilation, non-square kernels, padding beyond the kernel (the input gradient then takes col2im), 1-d to 3-d
@pytest.mark.parametrize("x_shape,w_shape,padding,dilation", [
    ((2, 1, 9, 8), (3, 1, 3, 3), 1, 1), ((2, 3, 8, 7), (4, 3, 2, 5), (1, 2), (2, 1)), ((2, 16, 6, 6), (8, 16, 3, 3), 1, 1),
    ((2, 16, 6, 5), (4, 16, 3, 3), 0, (1, 2)), ((3, 2, 9), (5, 2, 4), 3, 1), ((1, 24, 11), (6, 24, 2), 5, 3),
    ((2, 2, 4, 5, 3), (3, 2, 2, 3, 2), 1, 1), ((2, 3, 5, 5), (2, 3, 3, 3), 4, 1),
    # the forward's row grid: a folded tap that reads only padding (its shifted copy is all zeros), a 3-d middle
    # dim cropped off the grid with dilation, a 1-d layer whose product is the whole output
    ((2, 8, 5, 2), (3, 8, 2, 3), (1, 2), (1, 2)), ((2, 4, 3, 5, 4), (3, 4, 2, 3, 2), (1, 0, 1), (1, 2, 1)),
    ((3, 4, 6), (5, 4, 3), 0, 2),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_on_the_padded_grid(x_shape, w_shape, padding, dilation, dtype):
    nd = len(w_shape) - 2
    x, w = data(*x_shape).astype(dtype), data(*w_shape, seed=1).astype(dtype)
    tol = 1e-10 if dtype == "float64" else 1e-4
    kw = {"padding": padding, "dilation": dilation}
    xs, ws = st.tensor(x, requires_grad=True), st.tensor(w, requires_grad=True)
    xt, wt = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    ys, yt = getattr(F, f"conv{nd}d")(xs, ws, **kw), getattr(TF, f"conv{nd}d")(xt, wt, **kw)
    close(ys, yt, tol)
    cot = data(*tuple(yt.shape), seed=2).astype(dtype)
    gs = st.autograd.grad(ys, [xs, ws], st.tensor(cot))
    gt = torch.autograd.grad(yt, [xt, wt], torch.tensor(cot))
    close(gs[0], gt[0], tol)
    close(gs[1], gt[1], tol)


# few input channels take the per-sample columns (any stride, dilation, padding, 1-d to 3-d); a widening layer
# of stride 1 takes the transposed convolution on per-sample grids for its input gradient, with dilation and odd
# kernels (the grid col2im, for a padding beyond the kernel, is in test_conv_on_the_padded_grid)
@pytest.mark.parametrize("x_shape,w_shape,stride,padding,dilation", [
    ((3, 1, 9, 8), (4, 1, 3, 3), 1, 1, 1), ((2, 1, 11, 10), (3, 1, 5, 5), 2, 2, 1), ((2, 2, 9, 9), (5, 2, 3, 2), (2, 1), 1, 2),
    ((3, 1, 13), (4, 1, 5), 3, 0, 2), ((2, 1, 5, 6, 5), (2, 1, 3, 3, 3), 1, 1, 1), ((2, 1, 7, 7, 6), (3, 1, 2, 3, 2), 2, 0, 1),
    ((2, 3, 7, 8), (9, 3, 3, 2), 1, (2, 0), (1, 2)), ((2, 4, 6, 6), (12, 4, 5, 5), 1, 0, 1),
    ((2, 5, 12), (11, 5, 3), 1, 2, 3), ((1, 3, 4, 5, 4), (7, 3, 3, 2, 2), 1, 1, 1),
    # stride 1 in 1-d and 2-d: the columns from the row grid, with a tap that reads only padding
    ((3, 1, 10), (4, 1, 4), 1, 2, 2), ((2, 1, 6, 2), (3, 1, 3, 3), 1, (0, 2), (1, 2)),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_conv_per_sample_columns_and_grid_input_gradient(x_shape, w_shape, stride, padding, dilation, dtype):
    nd = len(w_shape) - 2
    x, w, b = data(*x_shape).astype(dtype), data(*w_shape, seed=1).astype(dtype), data(w_shape[0], seed=3).astype(dtype)
    tol = 1e-10 if dtype == "float64" else 1e-4
    kw = {"stride": stride, "padding": padding, "dilation": dilation}
    xs, ws, bs = (st.tensor(a, requires_grad=True) for a in (x, w, b))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    ys, yt = getattr(F, f"conv{nd}d")(xs, ws, bs, **kw), getattr(TF, f"conv{nd}d")(xt, wt, bt, **kw)
    close(ys, yt, tol)
    cot = data(*tuple(yt.shape), seed=2).astype(dtype)
    for a, e in zip(st.autograd.grad(ys, [xs, ws, bs], st.tensor(cot)), torch.autograd.grad(yt, [xt, wt, bt], torch.tensor(cot))):
        close(a, e, tol)


@pytest.mark.parametrize("chunk", [1, 700, 1 << 30])  # one sample per chunk, a few, the whole batch
@pytest.mark.parametrize("cin,cout,stride,groups", [(1, 4, 1, 1), (3, 5, 1, 1), (16, 4, 1, 1), (5, 3, 1, 1), (4, 6, 2, 1),
                                                   (4, 6, 1, 2), (6, 4, 2, 2)])
def test_conv_in_chunks_of_the_batch(monkeypatch, chunk, cin, cout, stride, groups):
    """The kernels cut the batch into chunks (``_CHUNK`` elements of temporaries); any cut gives torch's values."""
    from shapetorch.ops import convolution

    monkeypatch.setattr(convolution, "_CHUNK", chunk)
    x, w, b = data(5, cin, 7, 6), data(cout, cin // groups, 3, 3, seed=1), data(cout, seed=2)
    xs, ws, bs = (st.tensor(a, requires_grad=True) for a in (x, w, b))
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x, w, b))
    kw = {"stride": stride, "padding": 1, "groups": groups}
    ys, yt = F.conv2d(xs, ws, bs, **kw), TF.conv2d(xt, wt, bt, **kw)
    close(ys, yt, 1e-10)
    cot = data(*tuple(yt.shape), seed=3)
    for a, e in zip(st.autograd.grad(ys, [xs, ws, bs], st.tensor(cot)), torch.autograd.grad(yt, [xt, wt, bt], torch.tensor(cot))):
        close(a, e, 1e-10)


@pytest.mark.parametrize("kernel,stride,padding", [(2, 2, 0), (3, 2, 1), (3, 1, 0)])  # disjoint windows and overlapping
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pool_gradient_with_inf_and_nan(kernel, stride, padding, dtype):
    """An inf or NaN in the output's gradient reaches only the elements the windows took, as torch's scatter: the
    others stay 0 (a mask times the gradient would make them NaN)."""
    x = data(2, 3, 7, 6).astype(dtype)
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ys, yt = F.max_pool2d(xs, kernel, stride, padding), TF.max_pool2d(xt, kernel, stride, padding)
    g = data(*tuple(yt.shape), seed=1).astype(dtype)
    g[0, 0, 0, 0], g[1, 2, -1, -1], g[0, 1, 1, 0] = np.inf, np.nan, -np.inf
    ys.backward(st.tensor(g))
    yt.backward(torch.tensor(g))
    # (overlapping windows add their gradients in another order than torch's: equal up to rounding; inf and NaN where
    # torch has them)
    np.testing.assert_allclose(xs.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_max_pool_return_indices():
    x = data(2, 3, 7, 6)
    vs, is_ = F.max_pool2d(st.tensor(x), 3, 2, 1, return_indices=True)
    vt, it = TF.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    close(vs, vt)
    assert is_.tolist() == it.tolist()


# -- errors: the shared rules decide, and agree with torch --------------------------------------------

def codes(fn):
    with pytest.raises(st.ShapetorchError) as e:
        fn()
    return e.value.code


def test_linear_wrong_in_features_is_the_matmul_code():
    assert codes(lambda: nn.Linear(784, 256)(st.randn(8, 100))) == "matmul_error_inner_dimensions_do_not_match"


def test_nn_error_codes():
    assert codes(lambda: nn.Conv2d(3, 8, 3)(st.randn(2, 4, 8, 8))) == "conv_error_channels_mismatch"
    assert codes(lambda: nn.Conv2d(3, 8, 5)(st.randn(2, 3, 3, 3))) == "conv_error_kernel_too_large"
    assert codes(lambda: nn.Conv2d(3, 8, 3)(st.randn(3, 8, 8, 8, 1))) == "conv_error_input_rank"
    assert codes(lambda: F.max_pool2d(st.randn(1, 1, 8, 8), 3, padding=2)) == "pool_error_invalid_padding"
    assert codes(lambda: F.scaled_dot_product_attention(st.randn(2, 4, 8), st.randn(2, 5, 7), st.randn(2, 5, 3))) \
        == "attention_error_shape_mismatch"
    assert codes(lambda: nn.LayerNorm(5)(st.randn(2, 4))) == "layer_norm_error_shape_mismatch"
    assert codes(lambda: nn.BatchNorm2d(3)(st.randn(2, 4, 2, 2))) == "norm_error_channels_mismatch"
    assert codes(lambda: F.cross_entropy(st.randn(4, 3), st.tensor([0, 1]))) == "loss_error_target_shape_mismatch"
    assert codes(lambda: F.pad(st.randn(2, 3), (1, 2, 3))) == "pad_error_invalid_padding"
    assert codes(lambda: nn.Linear(2, 3).load_state_dict({"weight": st.zeros(3, 3), "bias": st.zeros(3)})) \
        == "load_state_dict_error_mismatch"
    assert codes(lambda: nn.Linear(2, 3).load_state_dict({"weight": st.zeros(3, 2)})) == "load_state_dict_error_mismatch"
    assert codes(lambda: F.cross_entropy(st.randn(4, 3), st.tensor([0, 1, 2, 3]))) == "at_error_index_out_of_bounds"


@fast(40)
@given(n=hs.integers(1, 2), c=hs.integers(1, 4), wc=hs.integers(1, 4), h=hs.integers(1, 9), k=hs.integers(1, 5),
       s=hs.integers(1, 3), p=hs.integers(0, 3), d=hs.integers(1, 2), g=hs.sampled_from([1, 2]))
def test_conv2d_accepts_and_rejects_as_torch(n, c, wc, h, k, s, p, d, g):
    x, w = data(n, c, h, h + 1), data(4, wc, k, k, seed=1)
    try:
        expected = TF.conv2d(torch.tensor(x), torch.tensor(w), None, s, p, d, g)
    except RuntimeError:
        with pytest.raises(st.ShapetorchError):
            F.conv2d(st.tensor(x), st.tensor(w), None, s, p, d, g)
        return
    close(F.conv2d(st.tensor(x), st.tensor(w), None, s, p, d, g), expected, 1e-9)


@pytest.mark.parametrize(("shape", "dim"), [((2, 3), -1), ((3,), 0), ((), 0), ((2, 4), 2), ((2, 4), 1), ((2, 0), 1),
                                            ((2, 6, 3), 1), ((2, 6, 3), -3)])
def test_glu_accepts_and_rejects_as_torch(shape, dim):
    """glu halves a dim: an odd size is torch's RuntimeError (it used to split unevenly and broadcast a wrong
    answer), a 0-D input too; the value and gradient otherwise."""
    x = data(*shape)
    try:
        expected = TF.glu(torch.tensor(x), dim)
    except (RuntimeError, IndexError) as e:
        with pytest.raises(type(e)) as got:
            F.glu(st.tensor(x), dim)
        assert got.value.code in ("glu_error_halving_dimension", "dimension_error_out_of_range")
        with pytest.raises(type(e)):
            nn.GLU(dim)(st.tensor(x))
        return
    close(F.glu(st.tensor(x), dim), expected, 1e-9)
    both(lambda t: F.glu(t, dim), lambda t: TF.glu(t, dim), [x])


@fast(40)
@given(h=hs.integers(1, 9), k=hs.integers(1, 4), s=hs.integers(1, 3), p=hs.integers(0, 2), d=hs.integers(1, 2),
       ceil=hs.booleans())
@example(h=1, k=2, s=2, p=0, d=1, ceil=True)  # a last window hanging over the end: torch accepts
@example(h=5, k=3, s=1, p=2, d=2, ceil=False)  # padding vs the undilated kernel: torch rejects
def test_max_pool2d_accepts_and_rejects_as_torch(h, k, s, p, d, ceil):
    x = data(1, 2, h, h + 2)
    try:
        expected = TF.max_pool2d(torch.tensor(x), k, s, p, d, ceil_mode=ceil)
    except RuntimeError:
        with pytest.raises(st.ShapetorchError):
            F.max_pool2d(st.tensor(x), k, s, p, d, ceil_mode=ceil)
        return
    close(F.max_pool2d(st.tensor(x), k, s, p, d, ceil_mode=ceil), expected)


INPLACE_ACTIVATIONS = [("relu", ()), ("relu6", ()), ("elu", (0.5,)), ("celu", (0.7,)), ("selu", ()),
                       ("leaky_relu", (0.2,)), ("hardtanh", (-0.5, 0.5)), ("threshold", (0.1, 9.0)), ("silu", ()),
                       ("mish", ()), ("hardswish", ()), ("hardsigmoid", ())]


@pytest.mark.parametrize("name,args", INPLACE_ACTIVATIONS)
def test_functional_inplace_flag_as_torch(name, args):
    """``F.relu(x, inplace=True)`` writes into ``x`` (same object, version bumped), gradients flow through it,
    a leaf that requires grad is refused, and a tensor a backward still needs is caught at backward."""

    def prog(lib):
        fn = getattr(lib.nn.functional, name)
        x = lib.tensor([-2.0, -0.3, 0.0, 0.4, 3.0, 7.0])
        y = fn(x, *args, inplace=True)
        out = [y is x, x.tolist(), x._version, fn(lib.tensor([-1.0, 1.5]), *args).tolist()]
        w = lib.tensor([-1.0, 0.5, 2.0], requires_grad=True)
        try:
            fn(w, *args, inplace=True)
            out.append("accepted")
        except RuntimeError:
            out.append("RuntimeError")
        h = w * 2
        fn(h, *args, inplace=True).sum().backward()
        out.append(w.grad.tolist())
        e = w.exp()
        fn(e, *args, inplace=True)
        try:
            e.sum().backward()
            out.append("accepted")
        except RuntimeError:
            out.append("RuntimeError")
        return out

    ours, theirs = prog(st), prog(torch)
    assert ours[0] == theirs[0] and ours[2] == theirs[2] and ours[4] == theirs[4] and ours[6] == theirs[6]
    assert np.allclose(ours[1], theirs[1], atol=1e-6) and np.allclose(ours[3], theirs[3], atol=1e-6)
    assert np.allclose(ours[5], theirs[5], atol=1e-6)


@pytest.mark.parametrize("make", [lambda nn: nn.ReLU(inplace=True), lambda nn: nn.LeakyReLU(0.1, inplace=True),
                                  lambda nn: nn.Hardtanh(inplace=True), lambda nn: nn.ELU(inplace=True),
                                  lambda nn: nn.SiLU(inplace=True), lambda nn: nn.Threshold(0.1, 5.0, inplace=True)])
def test_activation_modules_inplace_as_torch(make):
    def prog(lib):
        x = lib.tensor([-2.0, -0.3, 0.4, 3.0])
        y = make(lib.nn)(x)
        return y is x, x.tolist()

    (same_s, xs), (same_t, xt) = prog(st), prog(torch)
    assert same_s == same_t and np.allclose(xs, xt, atol=1e-6)


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d"])
def test_dropout_inplace_as_torch(name):
    """In training, ``inplace=True`` writes the dropped and scaled values into the input; in eval it is the input."""
    for lib in (st, torch):
        fn = getattr(lib.nn.functional, name)
        x = lib.ones(2, 3, 4)
        y = fn(x, 0.5, True, True)
        assert y is x and x._version == 1
        assert set(np.unique(np.asarray(x.tolist())).tolist()) <= {0.0, 2.0}
        assert fn(x, 0.5, False, True) is x
        m = getattr(lib.nn, {"dropout": "Dropout", "dropout1d": "Dropout1d", "dropout2d": "Dropout2d"}[name])(0.5, True)
        z = lib.ones(2, 3, 4)
        assert m(z) is z


def test_conv_and_attention_refusals_name_torch_sizes():
    """The numbers in the refusals are torch's: the ranks a conv accepts, the padded input size, the two
    embedding sizes of an attention (torch's own wording differs; the numbers and the class do not)."""
    import re

    cases = [
        (lambda L: L.nn.functional.conv2d(L.zeros(2, 3), L.zeros(1, 1, 1, 1)), r"(\d)D \(unbatched\) or (\d)D",
         r"(\d)-D \(unbatched\) or (\d)-D"),
        (lambda L: L.nn.functional.conv2d(L.zeros(1, 1, 3, 3), L.zeros(1, 1, 6, 6), padding=1),
         r"padded input size per channel: \((\d+) x (\d+)\)", r"padded input size per channel \((\d+), (\d+)\)"),
        (lambda L: L.nn.functional.scaled_dot_product_attention(L.zeros(2, 3, 4), L.zeros(2, 3, 5), L.zeros(2, 3, 5)),
         r"batch2 tensor to be: \[\d+, (\d+)\] but got: \[\d+, (\d+)\]", r"sizes differ \((\d+) != (\d+)\)"),
    ]
    for call, theirs, ours in cases:
        with pytest.raises(RuntimeError) as want:
            call(torch)
        with pytest.raises(RuntimeError) as got:
            call(st)
        w, g = re.search(theirs, str(want.value)), re.search(ours, str(got.value))
        assert w is not None and g is not None and w.groups() == g.groups(), (str(want.value), str(got.value))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_gradient_is_torchs_select(dtype):
    """relu's gradient (a bitwise select on the CPU) is torch's threshold_backward bit for bit: a NaN output
    passes its gradient, an inf or NaN gradient of a zeroed element becomes +0, and it is linear in the
    gradient for a second order."""
    # (a NaN with its sign bit set, and the least subnormal, whose only set bit is the lowest)
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.nan, np.inf, -np.inf, 3.0, -1.0, 2.0, -np.nan, 5e-324, -5e-324], dtype=dtype)
    x[-2:] = np.array([1, 1], dtype=f"u{x.itemsize}").view(dtype) * np.array([1, -1], dtype=dtype)
    cot = np.array([1.0, -3.0, np.inf, -2.0, 5.0, np.nan, np.nan, -np.inf, -4.0, -0.0, 7.0, 6.0, 8.0], dtype=dtype)
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    cs, ct = st.tensor(cot, requires_grad=True), torch.tensor(cot, requires_grad=True)
    (gs,) = st.autograd.grad(F.relu(xs), [xs], cs, create_graph=True)
    (gt,) = torch.autograd.grad(TF.relu(xt), [xt], ct, create_graph=True)
    assert gs.detach().numpy().tobytes() == gt.detach().numpy().tobytes()
    w = data(13, seed=4).astype(dtype)
    (hs,) = st.autograd.grad((gs * st.tensor(w)).sum(), [cs])
    (ht,) = torch.autograd.grad((gt * torch.tensor(w)).sum(), [ct])
    assert hs.numpy().tobytes() == ht.numpy().tobytes()


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "softmin"])
def test_softmax_family_takes_stacklevel_positionally(name: str) -> None:
    # torch.nn.functional's signature is (input, dim=None, _stacklevel=3, dtype=None): a third positional
    # argument is the stacklevel, not a dtype; without dim, torch's legacy dim and its warning on the caller
    x = data(2, 3, 4)
    for args, kwargs in (((1, 3), {}), ((1, 5, None), {}), ((-1,), {"dtype": "float64"}), ((), {})):
        got, want = [], []
        for lib, out in ((st, got), (torch, want)):
            kw = {k: getattr(lib, v) for k, v in kwargs.items()}
            with pytest.warns(UserWarning, match="Implicit dimension") if not args else _no_warning() as w:
                out.append(getattr(lib.nn.functional, name)(lib.tensor(x), *args, **kw))
            if not args:
                assert w[0].filename == __file__
        assert str(got[0].dtype).split(".")[1] == str(want[0].dtype).split(".")[1]
        np.testing.assert_allclose(got[0].numpy(), want[0].numpy(), rtol=1e-6, atol=1e-7)


def _no_warning():
    import contextlib
    import warnings

    @contextlib.contextmanager
    def none():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            yield []

    return none()


@pytest.mark.parametrize("dtype", ["int32", "int16", "int8", "bool", "uint8", "int64"])
@pytest.mark.parametrize("op", ["nll_loss", "cross_entropy"])
def test_class_index_loss_target_dtypes_as_torch(op: str, dtype: str) -> None:
    """torch refuses int32 labels (``from_numpy`` of NumPy int32 data) in its class-index losses; uint8 and int64
    are taken."""
    outcomes = []
    for lib in (torch, st):
        x = lib.tensor([[0.2, -1.0, 0.5], [1.5, 0.3, -0.2]])
        t = lib.tensor([2, 0]).to(getattr(lib, dtype))
        try:
            outcomes.append(float(getattr(lib.nn.functional, op)(x, t)))
        except Exception as e:  # noqa: BLE001  (the class and message are what is compared)
            outcomes.append(e)
    theirs, ours = outcomes
    if isinstance(theirs, Exception):
        assert isinstance(ours, RuntimeError) and getattr(ours, "code", None) == "loss_error_target_dtype"
        assert str(theirs) in str(ours)
    else:
        assert not isinstance(ours, Exception) and ours == pytest.approx(theirs, rel=1e-6)


@fast(30)
@given(nd=hs.integers(1, 3), data_=hs.data())
def test_adaptive_max_pool_against_torch(nd, data_):
    """Bins of equal and unequal widths (an output larger than the input too): values, gradients (small integers,
    so a bin often holds its maximum twice: the gradient goes to the first, as torch's), and torch's node name."""
    spatial = data_.draw(hs.lists(hs.integers(1, 9), min_size=nd, max_size=nd))
    out = data_.draw(hs.lists(hs.integers(1, 10), min_size=nd, max_size=nd))
    name = f"adaptive_max_pool{nd}d"
    both(lambda x: getattr(F, name)(x, out), lambda x: getattr(TF, name)(x, out), [np.round(data(2, 3, *spatial))])
    y = getattr(F, name)(st.tensor(data(2, 3, *spatial), requires_grad=True), out)
    assert y.grad_fn.name() == getattr(TF, name)(torch.zeros(2, 3, *spatial, requires_grad=True), out).grad_fn.name()


def test_adaptive_max_pool_output_no_machine_holds():
    """An output size of 2**40 is torch's RuntimeError with a code, raised before any loop over the bins."""
    with pytest.raises(RuntimeError, match="adaptive_max_pool1d: cannot allocate memory") as info:
        F.adaptive_max_pool1d(st.randn(2, 3, 8), 2**40)
    assert info.value.code == "memory_error_allocation"
    with pytest.raises(RuntimeError):
        TF.adaptive_max_pool1d(torch.randn(2, 3, 8), 2**40)
