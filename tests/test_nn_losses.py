"""torch.nn.functional's losses (margin, ranking, triplet, Gaussian/Poisson NLL, ...) and helpers (in-place
activations, pdist, local response norm, channel shuffle, LP pooling, alpha dropout, the deprecated upsample
aliases) and their modules, against torch: values, gradients, the deprecated ``size_average``/``reduce``
flags, and torch's verdict on bad input."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast

R = np.random.default_rng(0)


def _arr(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return R.uniform(lo, hi, shape)


def _signs(*shape: int) -> np.ndarray:
    return R.choice([-1.0, 1.0], shape)


def _labels(n: int, c: int) -> np.ndarray:
    return R.integers(0, c, n)


def _multilabel(n: int, c: int) -> np.ndarray:
    t = -np.ones((n, c), dtype=np.int64)
    for i in range(n):
        k = int(R.integers(0, c))
        t[i, :k] = R.choice(c, k, replace=False)
    return t


# (name, call(F, *tensors), arrays; the float arrays get requires_grad)
CASES: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("gaussian_nll", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v), [_arr(4, 3), _arr(4, 3), _arr(4, 3, lo=0.1)]),
    ("gaussian_nll_full_sum", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, full=True, reduction="sum"),
     [_arr(4, 3), _arr(4, 3), _arr(4, 3, lo=0.1)]),
    ("gaussian_nll_var_one_fewer_dim", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, reduction="none"),
     [_arr(4, 3), _arr(4, 3), _arr(4, lo=0.1)]),
    ("gaussian_nll_shared_var", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v), [_arr(4, 3), _arr(4, 3), _arr(4, 1, lo=0.1)]),
    ("gaussian_nll_clamped_var", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, eps=0.5),
     [_arr(5), _arr(5), np.array([0.1, 0.2, 0.6, 1.0, 3.0])]),
    ("poisson_nll", lambda F, x, y: F.poisson_nll_loss(x, y), [_arr(5, 2), _arr(5, 2, lo=0, hi=4)]),
    ("poisson_nll_rate_full", lambda F, x, y: F.poisson_nll_loss(x, y, log_input=False, full=True, reduction="none"),
     [_arr(5, 2, lo=0.1, hi=3), np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 0.5], [1.5, 7.0], [1.0, 2.0]])]),
    ("margin_ranking", lambda F, a, b, t: F.margin_ranking_loss(a, b, t, margin=0.3), [_arr(6), _arr(6), _signs(6)]),
    ("hinge_embedding", lambda F, x, t: F.hinge_embedding_loss(x, t, margin=0.7, reduction="none"),
     [_arr(3, 4), _signs(3, 4)]),
    ("soft_margin", lambda F, x, t: F.soft_margin_loss(x, t.detach()), [_arr(3, 4), _signs(3, 4)]),
    ("multilabel_soft_margin", lambda F, x, t, w: F.multilabel_soft_margin_loss(x, t, weight=w),
     [_arr(3, 4), R.integers(0, 2, (3, 4)).astype(float), _arr(4, lo=0.5, hi=1.5)]),
    ("cosine_embedding", lambda F, a, b, t: F.cosine_embedding_loss(a, b, t, margin=0.2), [_arr(5, 3), _arr(5, 3), _signs(5)]),
    ("cosine_embedding_1d", lambda F, a, b, t: F.cosine_embedding_loss(a, b, t), [_arr(3), _arr(3), np.array(-1.0)]),
    ("triplet", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5), [_arr(4, 3), _arr(4, 3), _arr(4, 3)]),
    ("triplet_p1_swap", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, p=1, swap=True, reduction="none"),
     [_arr(4, 3), _arr(4, 3), _arr(4, 3)]),
    ("triplet_distance_fn", lambda F, a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: 1.0 - F.cosine_similarity(u, v), margin=0.4, swap=True),
     [_arr(4, 3), _arr(4, 3), _arr(4, 3)]),
    ("multi_margin", lambda F, x, y: F.multi_margin_loss(x, y), [_arr(5, 4), _labels(5, 4)]),
    ("multi_margin_p2_weight", lambda F, x, y, w: F.multi_margin_loss(x, y, p=2, margin=0.5, weight=w.detach(),
                                                                   reduction="none"),
     [_arr(5, 4), _labels(5, 4), _arr(4, lo=0.5, hi=2)]),
    ("multi_margin_1d", lambda F, x, y: F.multi_margin_loss(x, y), [_arr(4), np.array(2)]),
    ("multilabel_margin", lambda F, x, y: F.multilabel_margin_loss(x, y), [_arr(4, 5), _multilabel(4, 5)]),
    ("multilabel_margin_1d_none", lambda F, x, y: F.multilabel_margin_loss(x, y, reduction="none"),
     [_arr(5), np.array([3, 0, -1, 1, 2])]),
    ("pdist", lambda F, x: F.pdist(x), [_arr(5, 3)]),
    ("pdist_p1", lambda F, x: F.pdist(x, p=1), [_arr(4, 2)]),
    ("local_response_norm_3d", lambda F, x: F.local_response_norm(x, 3, alpha=0.1, k=2.0), [_arr(2, 5, 4)]),
    ("local_response_norm_4d", lambda F, x: F.local_response_norm(x, 2), [_arr(2, 6, 3, 3)]),
    ("channel_shuffle", lambda F, x: F.channel_shuffle(x, 3), [_arr(2, 6, 2, 2)]),
    ("lp_pool1d", lambda F, x: F.lp_pool1d(x, 2, 3, stride=2), [_arr(2, 3, 9, lo=0.1)]),
    ("lp_pool2d", lambda F, x: F.lp_pool2d(x, 3, (2, 3), ceil_mode=True), [_arr(1, 2, 5, 7, lo=0.1)]),
    ("upsample_nearest", lambda F, x: F.upsample_nearest(x, scale_factor=2), [_arr(1, 2, 3, 3)]),
    ("upsample_bilinear", lambda F, x: F.upsample_bilinear(x, size=(5, 4)), [_arr(1, 2, 3, 3)]),
    ("rrelu_eval", lambda F, x: F.rrelu(x, 0.1, 0.3), [_arr(3, 4)]),
    ("gumbel_zero_prob_class", lambda F, x: F.gumbel_softmax(x, tau=0.5, hard=True)[:, 0],
     [np.array([[-np.inf, 0.0, 1.0], [-np.inf, 2.0, 0.0]])]),
]


def _run(lib: Any, fn: Callable[..., Any], arrays: list[np.ndarray]) -> tuple[Any, list[Any]]:
    ts = []
    for a in arrays:
        t = lib.tensor(a)
        if t.is_floating_point() and np.isfinite(a).all():
            t.requires_grad_(True)
        ts.append(t)
    out = fn(lib.nn.functional, *ts)
    if out.requires_grad:
        (out * lib.tensor(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))).sum().backward()
    return out, ts


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients_match_torch(name: str, fn: Callable[..., Any], arrays: list[np.ndarray]) -> None:
    want, t_in = _run(torch, fn, arrays)
    got, s_in = _run(st, fn, arrays)
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    for a, b in zip(s_in, t_in, strict=True):
        assert (a.grad is None) == (b.grad is None), name
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=name)


@fast(40)
@given(hs.sampled_from(["mse_loss", "l1_loss", "smooth_l1_loss", "soft_margin_loss", "margin_ranking_loss",
                        "hinge_embedding_loss", "poisson_nll_loss", "multilabel_soft_margin_loss", "kl_div",
                        "binary_cross_entropy", "multi_margin_loss", "multilabel_margin_loss", "cross_entropy",
                        "nll_loss", "cosine_embedding_loss", "triplet_margin_loss"]),
       hs.sampled_from([None, True, False]), hs.sampled_from([None, True, False]))
def test_deprecated_size_average_and_reduce_as_torch(name: str, size_average: Any, reduce: Any) -> None:
    """Either flag overrides ``reduction`` (it used to be ignored by the functions: a mean where torch summed)."""
    x, y, s = _arr(4, 3, lo=0.05, hi=0.95), _arr(4, 3, lo=0.05, hi=0.95), _signs(4, 3)
    args = {"margin_ranking_loss": (x, y, s), "hinge_embedding_loss": (x, s), "soft_margin_loss": (x, s),
            "cosine_embedding_loss": (x, y, s[:, 0]), "triplet_margin_loss": (x, y, x[::-1].copy()),
            "multi_margin_loss": (x, _labels(4, 3)), "multilabel_margin_loss": (x, _multilabel(4, 3)),
            "cross_entropy": (x, _labels(4, 3)), "nll_loss": (x, _labels(4, 3))}.get(name, (x, y))
    outs = []
    for lib in (torch, st):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = getattr(lib.nn.functional, name)(*map(lib.tensor, args), size_average=size_average, reduce=reduce)
        outs.append(out)
        assert any("size_average and reduce" in str(w.message) for w in caught) == (
            size_average is not None or reduce is not None)
    want, got = outs
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)


MODULES: list[tuple[str, Callable[[Any], Any], list[np.ndarray]]] = [
    ("GaussianNLLLoss", lambda nn: nn.GaussianNLLLoss(full=True), [_arr(3, 2), _arr(3, 2), _arr(3, 2, lo=0.2)]),
    ("PoissonNLLLoss", lambda nn: nn.PoissonNLLLoss(log_input=True), [_arr(4), _arr(4, lo=0, hi=3)]),
    ("MarginRankingLoss", lambda nn: nn.MarginRankingLoss(0.5, reduction="sum"), [_arr(4), _arr(4), _signs(4)]),
    ("HingeEmbeddingLoss", lambda nn: nn.HingeEmbeddingLoss(), [_arr(4), _signs(4)]),
    ("SoftMarginLoss", lambda nn: nn.SoftMarginLoss(), [_arr(4), _signs(4)]),
    ("CosineEmbeddingLoss", lambda nn: nn.CosineEmbeddingLoss(0.1), [_arr(3, 4), _arr(3, 4), _signs(3)]),
    ("TripletMarginLoss", lambda nn: nn.TripletMarginLoss(margin=0.3, p=1.5), [_arr(3, 4), _arr(3, 4), _arr(3, 4)]),
    ("TripletMarginWithDistanceLoss", lambda nn: nn.TripletMarginWithDistanceLoss(swap=True),
     [_arr(3, 4), _arr(3, 4), _arr(3, 4)]),
    ("MultiMarginLoss", lambda nn: nn.MultiMarginLoss(p=2), [_arr(3, 4), _labels(3, 4)]),
    ("MultiLabelMarginLoss", lambda nn: nn.MultiLabelMarginLoss(), [_arr(3, 4), _multilabel(3, 4)]),
    ("MultiLabelSoftMarginLoss", lambda nn: nn.MultiLabelSoftMarginLoss(reduction="none"),
     [_arr(3, 4), R.integers(0, 2, (3, 4)).astype(float)]),
    ("MSELoss legacy", lambda nn: nn.MSELoss(size_average=False), [_arr(3), _arr(3)]),
    ("Softmax2d", lambda nn: nn.Softmax2d(), [_arr(2, 3, 2, 2)]),
    ("RReLU eval", lambda nn: nn.RReLU(0.1, 0.2).eval(), [_arr(3, 3)]),
    ("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(3), [_arr(1, 4, 3, 3)]),
    ("ChannelShuffle", lambda nn: nn.ChannelShuffle(2), [_arr(1, 4, 2, 2)]),
    ("LPPool1d", lambda nn: nn.LPPool1d(2, 2), [_arr(1, 2, 6, lo=0.1)]),
    ("LPPool2d", lambda nn: nn.LPPool2d(1, 2, stride=1), [_arr(1, 2, 4, 4, lo=0.1)]),
    ("UpsamplingNearest2d", lambda nn: nn.UpsamplingNearest2d(scale_factor=2), [_arr(1, 1, 2, 3)]),
    ("UpsamplingBilinear2d", lambda nn: nn.UpsamplingBilinear2d(scale_factor=2), [_arr(1, 1, 2, 3)]),
    ("AlphaDropout eval", lambda nn: nn.AlphaDropout(0.3).eval(), [_arr(3, 3)]),
    ("FeatureAlphaDropout eval", lambda nn: nn.FeatureAlphaDropout(0.3).eval(), [_arr(2, 3, 2)]),
]


@pytest.mark.parametrize("name,make,arrays", MODULES, ids=[m[0] for m in MODULES])
def test_modules_match_torch(name: str, make: Callable[[Any], Any], arrays: list[np.ndarray]) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = make(torch.nn)(*map(torch.tensor, arrays))
        module = make(st.nn)
        got = module(*map(st.tensor, arrays))
    assert repr(module).split("(")[0] == name.split(maxsplit=1)[0]
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


BAD: list[tuple[str, Callable[..., Any], list[np.ndarray]]] = [
    ("gaussian negative var", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v), [_arr(3), _arr(3), np.array([1.0, -1, 1])]),
    ("gaussian negative float var", lambda F, x, y: F.gaussian_nll_loss(x, y, -1.0), [_arr(3), _arr(3)]),
    ("gaussian var shape", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v), [_arr(4, 3), _arr(4, 3), _arr(2, 2, lo=0.1)]),
    ("gaussian reduction", lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, reduction="avg"),
     [_arr(3), _arr(3), _arr(3, lo=0.1)]),
    ("margin ranking dims", lambda F, a, b, t: F.margin_ranking_loss(a, b, t), [_arr(3), _arr(3), _signs(1, 3)]),
    ("cosine embedding target dims", lambda F, a, b, t: F.cosine_embedding_loss(a, b, t), [_arr(3, 2), _arr(3, 2), _signs(3, 2)]),
    ("triplet dims", lambda F, a, p, n: F.triplet_margin_loss(a, p, n), [_arr(3, 2), _arr(3, 2), _arr(2)]),
    ("triplet margin", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, margin=0.0), [_arr(3, 2), _arr(3, 2), _arr(3, 2)]),
    ("triplet distance margin", lambda F, a, p, n: F.triplet_margin_with_distance_loss(a, p, n, margin=-1.0),
     [_arr(3, 2), _arr(3, 2), _arr(3, 2)]),
    ("multi margin p", lambda F, x, y: F.multi_margin_loss(x, y, p=3), [_arr(3, 4), _labels(3, 4)]),
    ("multi margin target", lambda F, x, y: F.multi_margin_loss(x, y), [_arr(3, 4), _labels(2, 4)]),
    ("multilabel margin shape", lambda F, x, y: F.multilabel_margin_loss(x, y), [_arr(3, 4), _multilabel(3, 3)]),
    ("pdist rank", lambda F, x: F.pdist(x), [_arr(2, 3, 4)]),
    ("lrn rank", lambda F, x: F.local_response_norm(x, 2), [_arr(3, 4)]),
    ("channel shuffle groups", lambda F, x: F.channel_shuffle(x, 4), [_arr(1, 6, 2, 2)]),
    ("soft margin target requires grad", lambda F, x, t: F.soft_margin_loss(x, t.requires_grad_()),
     [_arr(3), _signs(3)]),
    ("multi margin weight requires grad", lambda F, x, y, w: F.multi_margin_loss(x, y, weight=w.requires_grad_()),
     [_arr(3, 4), _labels(3, 4), _arr(4)]),
    ("mse reduction", lambda F, x, y: F.mse_loss(x, y, reduction="avg"), [_arr(3), _arr(3)]),
    ("cross entropy reduction", lambda F, x, y: F.cross_entropy(x, y, reduction="avg"), [_arr(2, 3), _labels(2, 3)]),
    ("poisson reduction", lambda F, x, y: F.poisson_nll_loss(x, y, reduction="avg"), [_arr(3), _arr(3)]),
]


@pytest.mark.parametrize("name,fn,arrays", BAD, ids=[b[0] for b in BAD])
def test_bad_input_gets_torchs_verdict(name: str, fn: Callable[..., Any], arrays: list[np.ndarray]) -> None:
    with pytest.raises(Exception) as theirs:
        fn(torch.nn.functional, *map(torch.tensor, arrays))
    with pytest.raises(st.ShapetorchError) as ours:
        fn(st.nn.functional, *map(st.tensor, arrays))
    assert isinstance(ours.value, type(theirs.value)), f"torch {theirs.value!r}; shapetorch {ours.value!r}"


def test_inplace_activations_write_into_their_input() -> None:
    for name, args in [("relu_", ()), ("elu_", (0.5,)), ("celu_", (1.5,)), ("selu_", ()), ("leaky_relu_", (0.2,)),
                       ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -3.0)), ("rrelu_", (0.1, 0.3))]:
        a = _arr(3, 4)
        t, s = torch.tensor(a), st.tensor(a)
        rt = getattr(torch.nn.functional, name)(t, *args)
        rs = getattr(st.nn.functional, name)(s, *args)
        assert rs is s and rt is t
        np.testing.assert_allclose(s.numpy(), t.numpy(), rtol=1e-12, err_msg=name)
        assert s._version == 1


def test_random_helpers_follow_their_distributions() -> None:
    st.manual_seed(0)
    x = st.zeros(4000, 3)
    soft = st.nn.functional.gumbel_softmax(x, tau=1.0)
    np.testing.assert_allclose(soft.sum(-1).numpy(), 1.0, rtol=1e-6)
    hard = st.nn.functional.gumbel_softmax(st.tensor([[0.0, np.log(3.0)]]).expand(4000, 2), hard=True)
    assert set(np.unique(hard.numpy())) <= {0.0, 1.0}
    assert abs(hard[:, 1].mean().item() - 0.75) < 0.03  # Gumbel-max samples the softmax's probabilities
    logits = st.zeros(2, 3, requires_grad=True)
    (st.nn.functional.gumbel_softmax(logits, hard=True) * st.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert logits.grad is not None and float(logits.grad.abs().sum()) > 0  # straight through

    x = st.randn(20000)
    y = st.nn.functional.alpha_dropout(x, 0.3, training=True)
    assert abs(y.mean().item()) < 0.05 and abs(y.std().item() - 1.0) < 0.05  # SELU's statistics kept
    assert (y == y.mode().values).float().mean().item() > 0.25  # the dropped units share one value
    f = st.nn.functional.feature_alpha_dropout(st.randn(50, 40, 6), 0.5, training=True)
    per_channel = f.std(-1)
    assert (per_channel < 1e-6).float().mean().item() > 0.3  # whole channels dropped together

    r = st.nn.functional.rrelu(-st.ones(10000), 0.1, 0.3, training=True)
    slopes = -r.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
