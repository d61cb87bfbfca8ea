"""Convolutions (1-3 d, plain and transposed, functional and layers) with zero-size dims against torch: batch 0,
input channels 0, output channels 0, spatial 0 (with and without padding), groups: the same shapes, values and
gradients where torch computes, and torch's exception class where it refuses (with a shapetorch code)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
import shapetorch.nn.functional as F
from _nn_oracle import close

# (batch, in channels, out channels, spatial size, groups, padding)
_CASES = [(0, 2, 3, 4, 1, 0), (1, 0, 3, 4, 1, 0), (2, 0, 4, 4, 2, 0), (0, 0, 2, 4, 1, 0), (1, 2, 0, 4, 1, 0),
          (1, 4, 0, 4, 2, 0), (1, 2, 3, 0, 1, 0), (1, 2, 3, 0, 1, 1), (0, 2, 3, 0, 1, 1), (1, 0, 0, 4, 1, 0),
          (0, 2, 2, 4, 2, 0), (1, 2, 3, 1, 1, 0), (1, 2, 3, 4, 1, 1)]


def _run(lib: object, fl: object, nd: int, transposed: bool, case: tuple[int, ...], unbatched: bool) -> object:
    n, cin, cout, size, groups, pad = case
    x = lib.ones(((n,) if not unbatched else ()) + (cin,) + (size,) * nd,  # type: ignore[attr-defined]
                 dtype=lib.float64, requires_grad=True)  # type: ignore[attr-defined]
    rows, cols = (cin, cout // groups) if transposed else (cout, cin // groups)
    w = lib.ones((rows, cols) + (2,) * nd, dtype=lib.float64, requires_grad=True)  # type: ignore[attr-defined]
    b = lib.ones(cout, dtype=lib.float64, requires_grad=True)  # type: ignore[attr-defined]
    f = getattr(fl, f"conv_transpose{nd}d" if transposed else f"conv{nd}d")
    try:
        y = f(x, w, b, padding=pad, groups=groups)
    except Exception as e:  # noqa: BLE001 - the class is compared with torch's
        return e
    (y * 2).sum().backward()
    return y, x.grad, w.grad, b.grad


# an unbatched input is a batch of 1: its cases are those of batch 1
_PARAMS = [(c, u) for c in _CASES for u in ((False, True) if c[0] == 1 else (False,))]


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("case,unbatched", _PARAMS, ids=[f"{c}{'-unbatched' if u else ''}" for c, u in _PARAMS])
def test_zero_size_convolution_as_torch(case: tuple[int, ...], unbatched: bool, nd: int, transposed: bool) -> None:
    got = _run(st, F, nd, transposed, case, unbatched)
    want = _run(torch, TF, nd, transposed, case, unbatched)
    if isinstance(want, Exception):
        assert isinstance(got, Exception), f"torch refuses ({want}); shapetorch gave {got}"
        assert isinstance(got, type(want)) and getattr(got, "code", None), (type(got), got, want)
        return
    assert not isinstance(got, Exception), f"torch computes; shapetorch raised {got!r}"
    for a, b, what in zip(got, want, ("value", "x.grad", "w.grad", "b.grad")):  # type: ignore[call-overload]
        assert (a is None) == (b is None), what
        if b is not None:
            close(a, b, 1e-12, what=what)


def test_zero_channel_layer_as_torch() -> None:
    for cls, tcls in ((st.nn.Conv1d, torch.nn.Conv1d), (st.nn.Conv2d, torch.nn.Conv2d)):
        m, tm = cls(0, 3, 2), tcls(0, 3, 2)
        nd = 1 if cls is st.nn.Conv1d else 2
        y, yt = m(st.ones((2, 0) + (4,) * nd)), tm(torch.ones((2, 0) + (4,) * nd))
        assert tuple(y.shape) == tuple(yt.shape)
        y.sum().backward()
        assert m.bias.grad is not None and tuple(m.bias.grad.shape) == (3,)
        assert not m.bias.grad.any()
