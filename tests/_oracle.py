"""PyTorch as the oracle: run one expression on shapetorch and on torch, compare the results.

``compare(fn, *inputs)`` calls ``fn(lib, *tensors)`` with ``lib`` = ``shapetorch`` and ``torch`` and the
inputs made in each library from the same NumPy data. Where torch raises, shapetorch must raise a
``ShapetorchError`` (optionally with a given code or code family); where torch accepts, shapetorch
must accept and match in dtype, shape and values (tolerance fit for the dtype).

Also the hypothesis strategies the op tests share: shapes, broadcast pairs, dims, index tuples.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, settings
from hypothesis import strategies as hs

import shapetorch as st

DTYPES = [
    "bool", "uint8", "int8", "int16", "int32", "int64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
NP = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16, "int32": np.int32,
    "int64": np.int64, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
    "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
}


def fast(n: int = 40) -> settings:
    """Per-test settings: few examples, no deadline (the first torch call is slow)."""
    return settings(max_examples=n, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.filter_too_much])


def sdt(name: str) -> Any:
    return getattr(st, "bool_" if name == "bool" else name)


def tdt(name: str) -> torch.dtype:
    return getattr(torch, name)


def tname(d: torch.dtype) -> str:
    return str(d).removeprefix("torch.")


# -- data ----------------------------------------------------------------------------------------------

def values(shape: Sequence[int], dtype: str, seed: int = 0, *, nonzero: bool = False, positive: bool = False) -> np.ndarray:
    """Random data for ``dtype`` in a wide NumPy dtype (float32 stands in for bfloat16)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    if dtype == "bool":
        return np.ones(shape, bool) if nonzero or positive else rng.random(shape) < 0.5
    if dtype in INTS:
        lo = 1 if positive else (0 if dtype == "uint8" else -6)
        a = np.asarray(rng.integers(lo, 7, size=shape), dtype=np.int64)
        if nonzero:
            a[a == 0] = 1
        return a.astype(NP[dtype])
    real = np.asarray(np.round(rng.normal(size=shape) * 2, 2))
    if positive:
        real = np.abs(real) + 0.25
    elif nonzero:
        real[np.abs(real) < 0.25] = 0.5
    if dtype in COMPLEX:
        imag = np.round(rng.normal(size=shape) * 2, 2)
        return (real + 1j * imag).astype(NP[dtype])
    return real.astype(np.float32 if dtype == "bfloat16" else NP[dtype])


def make(arr: np.ndarray, dtype: str, requires_grad: bool = False) -> tuple[Any, torch.Tensor]:
    """The same data as a shapetorch tensor and a torch tensor of ``dtype``."""
    arr = np.asarray(arr)
    if dtype == "bfloat16":
        theirs = torch.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)).to(torch.bfloat16)
        ours = st.from_numpy(np.ascontiguousarray(arr, dtype=np.float32).astype(ml_dtypes.bfloat16))
    else:
        a = np.array(arr, dtype=NP[dtype], copy=True)
        theirs = torch.from_numpy(a.copy())
        ours = st.from_numpy(a)
    if requires_grad:
        ours.requires_grad_(True)
        theirs.requires_grad_(True)
    return ours, theirs


def rand(shape: Sequence[int], dtype: str, seed: int = 0, **kw: Any) -> tuple[Any, torch.Tensor]:
    return make(values(shape, dtype, seed, **kw), dtype)


class Same:
    """An input passed unchanged to both libraries (a Python scalar, a dim, a list)."""

    def __init__(self, value: Any) -> None:
        self.value = value


def to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype == torch.bfloat16:
            x = x.float()
        return x.resolve_conj().resolve_neg().numpy()
    a = np.asarray(x.detach().numpy())
    return a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a


TOL = {
    "float16": (1e-2, 1e-2), "bfloat16": (3e-2, 3e-2), "float32": (1e-5, 1e-5), "complex64": (1e-5, 1e-5),
    "float64": (1e-9, 1e-10), "complex128": (1e-9, 1e-10),
}


def assert_same(ours: Any, theirs: Any, tol: tuple[float, float] | None = None, path: str = "result") -> None:
    """dtype, shape and values (NaNs equal; tolerance by dtype); recurses into tuples and lists."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, st.Tensor), f"{path}: expected a Tensor, got {type(ours).__name__}"
        if theirs.dtype == torch.complex32:  # shapetorch has no complex32: float16 with complex gives complex64
            theirs = theirs.to(torch.complex64)
            tol = tol or TOL["float16"]
        assert ours.dtype.name == tname(theirs.dtype), f"{path}: dtype {ours.dtype.name} != torch {tname(theirs.dtype)}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: shape {tuple(ours.shape)} != torch {tuple(theirs.shape)}"
        a, b = to_numpy(ours), to_numpy(theirs)
        name = tname(theirs.dtype)
        if name in TOL:
            rtol, atol = tol or TOL[name]
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)), f"{path}: expected a sequence, got {type(ours).__name__}"
        assert len(ours) == len(theirs), f"{path}: {len(ours)} items != torch {len(theirs)}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same(o, t, tol, f"{path}[{i}]")
    elif isinstance(theirs, torch.dtype):
        assert ours.name == tname(theirs), f"{path}: {ours} != {theirs}"
    elif isinstance(theirs, torch.Size):
        assert tuple(ours) == tuple(theirs), f"{path}: {ours} != {theirs}"
    elif isinstance(theirs, float):
        assert type(ours) is float, f"{path}: {ours!r} is not a float"
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, equal_nan=True, err_msg=path)
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != torch {theirs!r}"


def _codes_ok(code: str, codes: str | Sequence[str] | None) -> bool:
    if codes is None:
        return True
    if isinstance(codes, str):
        codes = (codes,)
    return any(code == c or code.startswith(c) for c in codes)


def convert(inputs: Sequence[Any], requires_grad: bool = False) -> tuple[list[Any], list[Any]]:
    ours, theirs = [], []
    for x in inputs:
        if isinstance(x, Same):
            ours.append(x.value)
            theirs.append(x.value)
        elif isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], torch.Tensor):
            ours.append(x[0])
            theirs.append(x[1])
        else:  # (array, dtype)
            o, t = make(x[0], x[1], requires_grad)
            ours.append(o)
            theirs.append(t)
    return ours, theirs


def compare(fn: Callable[..., Any], *inputs: Any, codes: str | Sequence[str] | None = None,
            tol: tuple[float, float] | None = None, plain: tuple[type[BaseException], ...] = ()) -> Any:
    """Run ``fn(lib, *inputs)`` in both libraries and check they agree.

    Each input is ``(ours, theirs)`` tensors, ``(ndarray, dtype)`` or :class:`Same`. ``codes``: the
    acceptable catalogue codes (or prefixes) when torch raises. ``plain``: non-shapetorch exception
    types accepted from shapetorch where torch raises (documented differences).
    Returns shapetorch's result (or the exception).
    """
    ours, theirs = convert(inputs)
    try:
        expected = fn(torch, *theirs)
    except (RuntimeError, IndexError, ValueError, TypeError, ZeroDivisionError, NotImplementedError) as e:
        if "ComplexHalf" in str(e):  # no oracle: torch has complex32 kernels missing, shapetorch uses complex64
            return None
        try:
            fn(st, *ours)
        except st.ShapetorchError as got:
            assert _codes_ok(got.code, codes), f"torch raised {e!r}; shapetorch raised code {got.code}, expected {codes}"
            return got
        except plain as got:
            return got
        except Exception as got:  # noqa: BLE001
            pytest.fail(f"torch raised {type(e).__name__}: {e}\nshapetorch raised a non-shapetorch {type(got).__name__}: {got}")
        pytest.fail(f"torch raised {type(e).__name__}: {e}\nbut shapetorch accepted")
    try:
        got = fn(st, *ours)
    except st.ShapetorchError as err:
        pytest.fail(f"torch accepted (result {getattr(expected, 'shape', expected)}) but shapetorch raised [{err.code}] {err}")
    assert_same(got, expected, tol)
    return got


def rejects(fn: Callable[..., Any], *inputs: Any, codes: str | Sequence[str] | None = None) -> st.ShapetorchError:
    """Both libraries must raise; returns shapetorch's error."""
    ours, theirs = convert(inputs)
    with pytest.raises(Exception):  # noqa: B017, PT011
        fn(torch, *theirs)
    with pytest.raises(st.ShapetorchError) as info:
        fn(st, *ours)
    assert _codes_ok(info.value.code, codes), info.value.code
    return info.value


# -- strategies ----------------------------------------------------------------------------------------

sizes = hs.integers(0, 3) | hs.just(1)
seeds = hs.integers(0, 2**31 - 1)


def shapes(min_rank: int = 0, max_rank: int = 4, min_side: int = 0, max_side: int = 3) -> hs.SearchStrategy[tuple[int, ...]]:
    side = hs.integers(min_side, max_side) | hs.just(max(1, min_side))
    return hs.lists(side, min_size=min_rank, max_size=max_rank).map(tuple)


@hs.composite
def broadcast_pairs(draw: Any, compatible: bool | None = None, max_rank: int = 4) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes; ``compatible`` True/False forces the verdict, None draws either (mostly compatible)."""
    a = draw(shapes(0, max_rank))
    keep = draw(hs.integers(0, len(a)))
    b = []
    for d in a[len(a) - keep:]:
        choice = draw(hs.sampled_from(["same", "same", "one", "other"] if compatible is not True else ["same", "one"]))
        b.append(d if choice == "same" else 1 if choice == "one" else draw(hs.integers(0, 4)))
    extra = draw(hs.lists(hs.integers(0, 3), max_size=max_rank - len(b)))
    b = tuple(extra) + tuple(b)
    if draw(hs.booleans()):
        a, b = b, a
    if compatible is not None:
        ok = _broadcastable(a, b)
        from hypothesis import assume

        assume(ok == compatible)
    return a, tuple(b)


def _broadcastable(a: Sequence[int], b: Sequence[int]) -> bool:
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def dims_for(rank: int, out_of_range: bool = True) -> hs.SearchStrategy[int]:
    n = max(rank, 1)
    return hs.integers(-n - 1, n) if out_of_range else hs.integers(-n, n - 1)


@hs.composite
def index_tuples(draw: Any, shape: tuple[int, ...], tensors: bool = True) -> tuple[Any, ...]:
    """An index for a tensor of ``shape``: ints (sometimes out of range), slices, None, Ellipsis,
    bool masks, int lists. Returns items with tensors as ('long', list) / ('mask', array) markers,
    turned into each library's tensors by :func:`realize_index`."""
    items: list[Any] = []
    pos = 0
    n_items = draw(hs.integers(0, len(shape) + 1))
    used_ellipsis = False
    for _ in range(n_items):
        kinds = ["int", "slice", "slice", "none"]
        if not used_ellipsis:
            kinds.append("ellipsis")
        if tensors:
            kinds += ["long", "list", "mask"]
        kind = draw(hs.sampled_from(kinds))
        size = shape[pos] if pos < len(shape) else 2
        if kind == "int":
            items.append(draw(hs.integers(-size - 1, size)))
            pos += 1
        elif kind == "slice":
            start = draw(hs.none() | hs.integers(-size - 1, size + 1))
            stop = draw(hs.none() | hs.integers(-size - 1, size + 1))
            step = draw(hs.none() | hs.integers(1, 3))
            items.append(slice(start, stop, step))
            pos += 1
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            items.append(Ellipsis)
            used_ellipsis = True
            pos = len(shape) - (n_items - len(items))
        elif kind in ("long", "list"):
            ishape = draw(shapes(0, 2, max_side=3))
            vals = draw(hs.lists(hs.integers(-size, max(size - 1, 0)), min_size=int(np.prod(ishape)),
                                 max_size=int(np.prod(ishape))))
            arr = np.array(vals, dtype=np.int64).reshape(ishape)
            if size == 0 and arr.size:
                arr = arr[:0] if arr.ndim else arr
            items.append(("long" if kind == "long" or arr.ndim == 0 else "list", arr))
            pos += 1
        else:
            k = draw(hs.integers(1, max(1, min(2, len(shape) - pos)))) if pos < len(shape) else 1
            mshape = tuple(shape[pos:pos + k]) or (2,)
            if draw(hs.integers(0, 5)) == 0:  # a mask of the wrong shape
                mshape = tuple(s + 1 for s in mshape)
            mask = np.random.default_rng(draw(seeds)).random(mshape) < 0.5
            items.append(("mask", mask))
            pos += len(mshape)
    return tuple(items)


def realize_index(index: tuple[Any, ...], lib: Any) -> tuple[Any, ...]:
    out = []
    for it in index:
        if isinstance(it, tuple) and it and it[0] in ("long", "list", "mask"):
            kind, arr = it
            if kind == "list":
                out.append(arr.tolist())
            elif lib is torch:
                out.append(torch.from_numpy(arr.copy()))
            else:
                out.append(st.from_numpy(arr.copy()))
        else:
            out.append(it)
    return tuple(out)
