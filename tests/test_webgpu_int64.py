"""int64 on WebGPU: stored as int32, so every int64 result is exact or refused, never wrapped silently.

Each case below has an exact 64-bit result outside int32: the device must raise the int64 DTypeError
(``method_dtype_not_supported_error``, "outside int32") at the next sync, where torch (the oracle for the
in-range cases) gives the exact value. Skipped without a WebGPU adapter unless SHAPETORCH_REQUIRE_WEBGPU=1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

DEV = "webgpu"


def _both(fn: Callable[[Any, list[Any]], Any], *arrays: np.ndarray) -> None:
    """Same values and dtype as torch (so the exact result is in int32 range: nothing is refused)."""
    got = fn(st, [st.tensor(a, device=DEV) for a in arrays])
    want = fn(torch, [torch.tensor(a) for a in arrays])
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.cpu().numpy(), want.numpy())


def _wraps(fn: Callable[[Any, list[Any]], Any], *arrays: np.ndarray) -> None:
    want = fn(torch, [torch.tensor(a) for a in arrays])
    exact = want.numpy().astype(np.int64)
    assert ((exact < -(2**31)) | (exact >= 2**31)).any()  # the case does leave int32
    r = fn(st, [st.tensor(a, device=DEV) for a in arrays])
    with pytest.raises(st.DTypeError) as e:
        r.cpu()
    assert e.value.code == "method_dtype_not_supported_error" and "outside int32" in str(e.value)


I64 = np.int64
_ACC_OUT = [np.array([0, 3], I64), np.array([0, 0, 1], I64), np.array([2**30, 2**30, 5], I64)]
_ACC_IN = [np.array([1, 3], I64), np.array([0, 0, 1, 0], I64), np.array([2**30, 2**30 - 9, -5, 7], I64)]
CASES: dict[str, tuple[Callable[[Any, list[Any]], Any], list[np.ndarray], list[np.ndarray]]] = {
    # name: (fn, inputs that leave int32, inputs that stay in it)
    "sum": (lambda lib, t: t[0].sum(), [np.array([2**30, 2**30, 7], I64)], [np.array([2**30, -(2**30), 2**30 - 1], I64)]),
    "sum_dim": (lambda lib, t: t[0].sum(1), [np.array([[2**30, 2**30], [1, 2]], I64)], [np.array([[2**30, 5], [-3, 2]], I64)]),
    "prod": (lambda lib, t: t[0].prod(), [np.array([65536, 65536], I64)], [np.array([46340, 46340], I64)]),
    "cumsum": (lambda lib, t: t[0].cumsum(0), [np.array([2**31 - 1, 1, -5], I64)], [np.array([2**31 - 1, -1, 1], I64)]),
    "cumprod": (lambda lib, t: t[0].cumprod(0), [np.array([-65536, 2, 32768], I64)], [np.array([-65536, 2, 16384], I64)]),
    "pow": (lambda lib, t: t[0] ** 31, [np.array([2, 1], I64)], [np.array([1, -1], I64)]),
    "pow_tensor": (lambda lib, t: t[0] ** t[1], [np.array([3, 2], I64), np.array([20, 40], I64)],
                   [np.array([3, -2], I64), np.array([19, 31], I64)]),
    "matmul": (lambda lib, t: t[0] @ t[1], [np.array([[2**20, 2**20]], I64), np.array([[2**10], [2**10]], I64)],
               [np.array([[2**20, -5]], I64), np.array([[2**10], [3]], I64)]),
    "abs": (lambda lib, t: t[0].abs(), [np.array([-(2**31), 3], I64)], [np.array([-(2**31) + 1, 3], I64)]),
    "floor_divide": (lambda lib, t: t[0] // -1, [np.array([-(2**31)], I64)], [np.array([-(2**31) + 1, 7], I64)]),
    "lcm": (lambda lib, t: lib.lcm(t[0], t[1]), [np.array([65537, 6], I64), np.array([65539, 4], I64)],
            [np.array([6, -4, 0], I64), np.array([4, 6, 0], I64)]),
    "cast": (lambda lib, t: (t[0] * 1e9).long(), [np.array([3.0, 1.5], np.float32)],
             [np.array([-2.147, 1.5], np.float32)]),
    "shift": (lambda lib, t: t[0] << 33, [np.array([1, 0], I64)], [np.array([0], I64)]),
    # the accumulating index ops add with 32-bit atomics: a repeated index sums past int32 (the in-range case
    # ends exactly at 2^31 - 1)
    "scatter_add": (lambda lib, t: t[0].scatter_add(0, t[1], t[2]), _ACC_OUT, _ACC_IN),
    "index_add": (lambda lib, t: t[0].index_add(0, t[1], t[2]), _ACC_OUT, _ACC_IN),
    "index_put_accumulate": (lambda lib, t: t[0].index_put((t[1],), t[2], accumulate=True), _ACC_OUT, _ACC_IN),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_int64_exact_or_refused(name):
    fn, outside, inside = CASES[name]
    _wraps(fn, *outside)
    _both(fn, *inside)  # the runtime goes on, and in-range results are exact


def test_bool_and_int32_sums_are_unchecked_and_exact():
    """A count (a sum of bools) is int64 too: in range, exact; int32 arithmetic wraps as torch's int32."""
    _both(lambda lib, t: (t[0] > 0).sum(), np.arange(-500, 500).astype(np.float32))
    _both(lambda lib, t: t[0] * t[0], np.array([65536, 3], np.int32))


@given(values=hs.lists(hs.integers(-(2**31), 2**31 - 1), min_size=1, max_size=40))
@fast(30)
def test_int64_sum_is_exact_or_refused(values):
    a = np.array(values, np.int64)
    exact = int(a.sum())
    r = st.tensor(a, device=DEV).sum()
    if -(2**31) <= exact < 2**31:
        assert r.item() == exact
    else:
        with pytest.raises(st.DTypeError):
            r.item()
