"""Tensor printing: ``tensor_repr`` must read exactly as torch's ``repr`` (dtype names aside)."""

from __future__ import annotations

import math
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import shapetorch._dtype as _dtype
from shapetorch._device import CPU, register_device, unregister_device
from shapetorch._printing import get_printoptions, printoptions, set_printoptions, tensor_repr
from shapetorch.backends import numpy_backend

# the test data deliberately overflows float16 and multiplies inf/nan
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TORCH_DTYPES: dict[str, torch.dtype] = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64, "complex64": torch.complex64, "complex128": torch.complex128,
}
NP_DTYPES: dict[str, Any] = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
}
FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


class FakeGradFn:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class FakeTensor:
    """The attributes ``tensor_repr`` reads, without the runtime."""

    def __init__(self, data: np.ndarray, requires_grad: bool = False, grad_fn: str | None = None, device: Any = CPU):
        self._data = data
        self.dtype = numpy_backend.dtype_of(data)
        self.requires_grad = requires_grad
        self.grad_fn = None if grad_fn is None else FakeGradFn(grad_fn)
        self.device = device


@pytest.fixture(autouse=True)
def _reset_printoptions():
    yield
    set_printoptions(profile="default")
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)
    _dtype.set_default_dtype(_dtype.float32)


def torch_pair(values: np.ndarray, name: str) -> tuple[torch.Tensor, np.ndarray]:
    """The torch tensor and the numpy array (in shapetorch's storage dtype) holding the same values."""
    if name == "bfloat16":
        t = torch.from_numpy(np.array(values, dtype=np.float32)).to(torch.bfloat16)
        return t, t.float().numpy().astype(ml_dtypes.bfloat16)
    t = torch.from_numpy(np.array(values).astype(NP_DTYPES[name]))
    return t, t.numpy().copy()


def expected(t: torch.Tensor) -> str:
    return repr(t).replace("torch.", "shapetorch.")


def check(values: np.ndarray, name: str, **kw: Any) -> None:
    t, a = torch_pair(values, name)
    want = expected(t)
    got = tensor_repr(FakeTensor(a, **kw))
    assert got == want, f"\n--- got ---\n{got}\n--- torch ---\n{want}"


# -- strategies -----------------------------------------------------------------------------------

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)


@st.composite
def float_values(draw: st.DrawFn, shape: tuple[int, ...]) -> np.ndarray:
    """Floats at one scale or many, integer-valued or not, with some zeros, nan, inf and -0."""
    kind = draw(st.sampled_from(["ints", "fraction", "wide", "huge", "tiny", "mixed"]))
    n = math.prod(shape)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "ints":
        v = rng.integers(-(10 ** draw(st.integers(0, 9))), 10 ** draw(st.integers(0, 9)) + 1, n).astype(np.float64)
    elif kind == "fraction":
        v = rng.normal(0, 10.0 ** draw(st.integers(-3, 6)), n)
    elif kind == "wide":
        v = rng.normal(0, 1, n) * 10.0 ** rng.integers(-6, 10, n)
    elif kind == "huge":
        v = rng.normal(0, 1, n) * 10.0 ** draw(st.integers(8, 30))
    elif kind == "tiny":
        v = rng.normal(0, 1, n) * 10.0 ** draw(st.integers(-12, -4))
    else:
        pool = [0.0, -0.0, 1.0, -1.0, 0.5, 1e-5, 123.456, 1e9, np.nan, np.inf, -np.inf, 2.0, 1000.0, 0.0001]
        v = rng.choice(np.array(pool), n)
    if n and draw(st.booleans()):
        specials = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0])
        mask = rng.random(n) < 0.2
        v[mask] = rng.choice(specials, int(mask.sum()))
    return v.reshape(shape)


@st.composite
def int_values(draw: st.DrawFn, shape: tuple[int, ...], name: str) -> np.ndarray:
    info = np.iinfo(NP_DTYPES[name])
    hi = draw(st.sampled_from([9, 100, 10**4, int(info.max)]))
    lo = max(int(info.min), -hi)
    return draw(hnp.arrays(NP_DTYPES[name], shape, elements=st.integers(lo, min(hi, int(info.max)))))


# -- comparison with torch ------------------------------------------------------------------------


@SETTINGS
@given(shape=shapes, name=st.sampled_from(FLOATS), data=st.data())
def test_floats_match_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    check(data.draw(float_values(shape)), name)


@SETTINGS
@given(shape=shapes, name=st.sampled_from(INTS), data=st.data())
def test_ints_match_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    check(data.draw(int_values(shape, name)), name)


@settings(max_examples=40, deadline=None)
@given(a=hnp.arrays(np.bool_, shapes))
def test_bools_match_torch(a: np.ndarray) -> None:
    check(a, "bool")


@SETTINGS
@given(shape=shapes, name=st.sampled_from(["complex64", "complex128"]), data=st.data())
def test_complex_match_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    re = data.draw(float_values(shape))
    im = data.draw(float_values(shape))
    check(re + 1j * im, name)


@settings(max_examples=25, deadline=None)
@given(
    shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=40).filter(lambda s: 1000 < math.prod(s) < 40000),
    name=st.sampled_from(["float32", "float64", "int64", "int32", "bool", "complex64", "float16"]),
    data=st.data(),
)
def test_summarized_match_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    if name == "bool":
        values = np.random.default_rng(data.draw(st.integers(0, 1000))).random(shape) < 0.5
    elif name in INTS:
        values = data.draw(int_values(shape, name))
    else:
        values = data.draw(float_values(shape))
        if name == "complex64":
            values = values - 1j * values[::-1].reshape(shape) if values.ndim == 1 else values + 2j
    check(values, name)


@SETTINGS
@given(
    shape=shapes,
    name=st.sampled_from(["float32", "float64", "int64", "int8", "bool", "complex64", "bfloat16"]),
    precision=st.none() | st.integers(0, 10),
    threshold=st.none() | st.integers(0, 50) | st.just(math.inf),
    edgeitems=st.none() | st.integers(0, 4),
    linewidth=st.none() | st.integers(10, 200),
    profile=st.none() | st.sampled_from(["default", "short", "full"]),
    sci_mode=st.none() | st.booleans(),
    data=st.data(),
)
def test_printoptions_match_torch(
    shape: tuple[int, ...], name: str, precision: int | None, threshold: float | None, edgeitems: int | None,
    linewidth: int | None, profile: str | None, sci_mode: bool | None, data: st.DataObject,
) -> None:
    opts: dict[str, Any] = {
        "precision": precision, "threshold": threshold, "edgeitems": edgeitems, "linewidth": linewidth,
        "profile": profile, "sci_mode": sci_mode,
    }
    torch.set_printoptions(**opts)
    set_printoptions(**opts)
    if name == "bool":
        values = data.draw(hnp.arrays(np.bool_, shape))
    elif name in INTS:
        values = data.draw(int_values(shape, name))
    else:
        values = data.draw(float_values(shape))
        if name == "complex64":
            values = values * (1 - 0.5j)
    check(values, name)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, data=st.data(), grad_fn=st.booleans(), linewidth=st.integers(30, 120))
def test_autograd_suffixes_match_torch(shape: tuple[int, ...], data: st.DataObject, grad_fn: bool, linewidth: int) -> None:
    torch.set_printoptions(linewidth=linewidth)
    set_printoptions(linewidth=linewidth)
    name = data.draw(st.sampled_from(["float32", "float64", "complex64"]))
    values = data.draw(float_values(shape))
    t, a = torch_pair(values, name)
    t.requires_grad_(True)
    if grad_fn:
        t = t * 2
        a = t.detach().numpy().copy()
        got = tensor_repr(FakeTensor(a, requires_grad=True, grad_fn="MulBackward0"))
    else:
        got = tensor_repr(FakeTensor(a, requires_grad=True))
    assert got == expected(t)


@settings(max_examples=40, deadline=None)
@given(shape=shapes, name=st.sampled_from(["float32", "float64", "complex64", "complex128", "float16"]), data=st.data())
def test_default_dtype_float64_matches_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    torch.set_default_dtype(torch.float64)
    _dtype.set_default_dtype(_dtype.float64)
    check(data.draw(float_values(shape)), name)


# -- fixed cases ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "name", "want"),
    [
        ([1.0, 2.0, 3.0], "float32", "tensor([1., 2., 3.])"),
        ([1.5, -2.25], "float64", "tensor([ 1.5000, -2.2500], dtype=shapetorch.float64)"),
        ([1e-5, 1.0], "float32", "tensor([1.0000e-05, 1.0000e+00])"),
        ([-0.0], "float32", "tensor([-0.])"),
        ([np.nan, np.inf, -np.inf, 0.0], "float32", "tensor([nan, inf, -inf, 0.])"),
        (3.5, "float32", "tensor(3.5000)"),
        (7, "int64", "tensor(7)"),
        (True, "bool", "tensor(True)"),
        ([[1, 2], [3, 4]], "int32", "tensor([[1, 2],\n        [3, 4]], dtype=shapetorch.int32)"),
        ([1 + 2j, 3 - 4j], "complex64", "tensor([1.+2.j, 3.-4.j])"),
        ([0.5, 1.0], "bfloat16", "tensor([0.5000, 1.0000], dtype=shapetorch.bfloat16)"),
    ],
)
def test_fixed_cases(values: Any, name: str, want: str) -> None:
    t, a = torch_pair(np.array(values), name)
    assert expected(t) == want
    assert tensor_repr(FakeTensor(a)) == want


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 1), (0, 0)])
@pytest.mark.parametrize("name", ["float32", "float64", "int64", "bool", "complex64", "uint8"])
def test_empty_matches_torch(shape: tuple[int, ...], name: str) -> None:
    check(np.zeros(shape), name)


def test_empty_examples() -> None:
    assert tensor_repr(FakeTensor(np.zeros((0, 3), np.float32))) == "tensor([], size=(0, 3))"
    assert tensor_repr(FakeTensor(np.zeros(0, np.int64))) == "tensor([], dtype=shapetorch.int64)"


def test_non_cpu_device_suffix() -> None:
    class Dev:
        type = "fakegpu"

        def __str__(self) -> str:
            return "fakegpu"

    register_device("fakegpu", lambda: numpy_backend)
    try:
        assert tensor_repr(FakeTensor(np.array([1.0, 2.0], np.float32), device=Dev())) == (
            "tensor([1., 2.], device='fakegpu')"
        )
        assert tensor_repr(FakeTensor(np.array([1, 2], np.int32), requires_grad=False, device=Dev())) == (
            "tensor([1, 2], device='fakegpu', dtype=shapetorch.int32)"
        )
    finally:
        unregister_device("fakegpu")


def test_printoptions_api() -> None:
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    for profile in ["short", "full", "default"]:
        set_printoptions(profile=profile)
        torch.set_printoptions(profile=profile)
        assert get_printoptions() == torch._tensor_str.get_printoptions()
    set_printoptions(precision=2, sci_mode=True)
    assert get_printoptions()["precision"] == 2 and get_printoptions()["sci_mode"] is True
    set_printoptions(linewidth=100)  # sci_mode goes back to None, as in torch
    assert get_printoptions()["sci_mode"] is None
    with printoptions(precision=1):
        assert tensor_repr(FakeTensor(np.array([1.25], np.float32))) == "tensor([1.2])"
    assert get_printoptions()["precision"] == 2


def test_summarized_example() -> None:
    got = tensor_repr(FakeTensor(np.arange(2000, dtype=np.int64)))
    assert got == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"


# -- through the real runtime ---------------------------------------------------------------------


def _runtime() -> Any:
    # The runtime is always there now: a failure to build a tensor is a bug to report, never a skip.
    import shapetorch

    return shapetorch


@SETTINGS
@given(shape=shapes, name=st.sampled_from(list(TORCH_DTYPES)), data=st.data())
def test_real_tensor_repr_matches_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    sh = _runtime()
    if name == "bool":
        values = data.draw(hnp.arrays(np.bool_, shape))
    elif name in INTS:
        values = data.draw(int_values(shape, name))
    else:
        values = data.draw(float_values(shape))
        if name.startswith("complex"):
            values = values * (0.25 - 3j)
    t, a = torch_pair(values, name)
    assert repr(sh.from_numpy(a)) == expected(t)
    assert str(sh.from_numpy(a)) == expected(t)


@settings(max_examples=30, deadline=None)
@given(shape=shapes, name=st.sampled_from(["float32", "float64"]), data=st.data())
def test_real_autograd_repr_matches_torch(shape: tuple[int, ...], name: str, data: st.DataObject) -> None:
    sh = _runtime()
    t, a = torch_pair(data.draw(float_values(shape)), name)
    leaf = sh.tensor(a, requires_grad=True)
    tl = t.clone().requires_grad_(True)
    assert repr(leaf) == expected(tl)
    assert repr(leaf + 1) == expected(tl + 1)
    assert repr(-(leaf * 2)) == expected(-(tl * 2))


def test_real_examples() -> None:
    sh = _runtime()
    assert repr(sh.tensor([[1.5, 2.0], [3.0, 4.0]])) == "tensor([[1.5000, 2.0000],\n        [3.0000, 4.0000]])"
    assert repr(sh.tensor([1, 2, 3], dtype=sh.int32)) == "tensor([1, 2, 3], dtype=shapetorch.int32)"
    assert repr(sh.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(sh.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(sh.tensor(2.0, requires_grad=True) * 3) == "tensor(6., grad_fn=<MulBackward0>)"
