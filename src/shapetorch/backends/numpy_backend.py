"""The NumPy backend: tensors hold ``numpy.ndarray``s; kernels are NumPy calls (see ``shapetorch.ops``)."""

from __future__ import annotations

import math
import threading
import warnings
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from .._dtype import DTYPES, DType
from .._errors import fail

NAME = "cpu"

# torch gives inf/nan silently where NumPy warns (exp overflow, log(0), 0/0). Kernels live in
# shapetorch's modules, so this filter hides those warnings from our calls only, at no per-call cost.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"shapetorch\.")

NP_DTYPE: dict[type[DType], np.dtype[Any]] = {
    d: np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype("bool" if name == "bool" else name)
    for name, d in DTYPES.items()
}
DTYPE_OF: dict[np.dtype[Any], type[DType]] = {v: k for k, v in NP_DTYPE.items()}
DTYPE_OF_TYPE: dict[type, type[DType]] = {v.type: k for k, v in NP_DTYPE.items()}


def dtype_of(a: np.ndarray[Any, Any]) -> type[DType]:
    return DTYPE_OF[a.dtype]


def asarray(data: Any, dtype: type[DType]) -> np.ndarray[Any, Any]:
    return np.asarray(data, dtype=NP_DTYPE[dtype])


def to_numpy(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a


def from_numpy(a: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    return a


def check_range(a: np.ndarray[Any, Any], lo: int, hi: int, code: str, op: str, skip: int | None = None,
                **kwargs: Any) -> None:
    """Raise ``code`` unless every element of ``a`` (other than ``skip``, an ignore_index) is in ``[lo, hi)``; a
    None in ``kwargs`` becomes the value found (the largest when one is too large, else the smallest). A device
    backend checks without waiting and raises at the next sync."""
    if skip is not None:
        a = a[a != skip]
    if a.size == 0:
        return
    top, bottom = int(a.max()), int(a.min())
    if top >= hi or bottom < lo:
        bad = top if top >= hi else bottom
        fail(code, op=op, **{k: (bad if v is None else v) for k, v in kwargs.items()})


def full(shape: tuple[int, ...], value: Any, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return np.full(shape, value, dtype=dtype)


def arange(start: int, step: int, n: int, dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
    return (start + np.arange(n, dtype=np.int64) * step).astype(dtype)


# -- optimizer updates ------------------------------------------------------------------------------------

def fused_step(kind: str, p: Any, g: Any, state: list[Any], hyper: dict[str, float]) -> bool:
    """An optimizer's update of one parameter, in place on the arrays, in the order of operations of the
    optimizer's ops (so the values are the same); False, with nothing changed, for arrays it does not take
    (not float32/float64 ndarrays of one dtype and shape, read-only, or sharing memory)."""
    if type(p) is not np.ndarray or p.dtype not in (np.float32, np.float64):
        return False
    if p.ndim == 0:  # NumPy's arithmetic on 0-d arrays returns scalars, which the in-place steps cannot write into
        return False
    dtype, shape = p.dtype, p.shape
    arrays = (p, g, *state)
    owned = contiguous = True
    roots = set()
    for a in arrays:
        if type(a) is not np.ndarray or a.shape != shape or a.dtype != dtype:
            return False
        flags = a.flags
        if not flags.writeable and a is not g:
            return False
        contiguous = contiguous and flags.c_contiguous
        root = a  # the array that owns a view's memory (a Linear weight's gradient is often a view)
        while type(root.base) is np.ndarray:
            root = root.base
        owned = owned and root.base is None and root.flags.owndata
        roots.add(id(root))
    # arrays whose memory lies in distinct arrays each owning its own cannot overlap: then no pairwise test (a
    # microsecond each, ten for Adam's five arrays, on every parameter of every step)
    if not owned or len(roots) < len(arrays):
        for i, a in enumerate(arrays):
            if any(np.may_share_memory(a, b) for b in arrays[i + 1:]):
                return False
    update = _UPDATES.get(kind)
    if update is None:
        return False
    n = p.size
    if n < 2 * _RUN or not contiguous:
        work = _work(p.dtype, n)
        update(p, g, state, hyper, (work[0].reshape(p.shape), work[1].reshape(p.shape)))
        return True
    # a large parameter in runs that stay in the cache: the 3 (SGD) to 14 (AdamW) passes over a run then read
    # the cache instead of memory (the same operations on each element, so the same values)
    work = _work(p.dtype, _RUN)
    flat = [a.reshape(-1) for a in arrays]
    for lo in range(0, n, _RUN):
        p_run, g_run, *s_run = (a[lo:lo + _RUN] for a in flat)
        m = p_run.size
        update(p_run, g_run, s_run, hyper, (work[0][:m], work[1][:m]))
    return True


_RUN = 1 << 15  # elements: 128 KiB of float32 per array
_WORK = threading.local()


def _work(dtype: np.dtype[Any], n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """Two work arrays of ``n`` elements of ``dtype``, kept (per thread) for the next steps: the updates write
    their temporaries there, so a step allocates nothing (a fresh array the size of a large parameter costs its
    page faults again on every step)."""
    cache: dict[Any, np.ndarray[Any, Any]] | None = getattr(_WORK, "arrays", None)
    if cache is None:
        cache = _WORK.arrays = {}
    buf = cache.get(dtype)
    if buf is None or buf.shape[1] < n:
        buf = cache[dtype] = np.empty((2, max(n, _RUN)), dtype)
    return buf[0, :n], buf[1, :n]


_Work = tuple[Any, Any]


def _adam(p: Any, g: Any, state: list[Any], h: dict[str, float], work: _Work) -> None:
    """Adam's update of ``p`` and ``state``, its temporaries in ``work``: each pass one operation of the ops'
    version, in its order (so the values are the same); 14 passes for AdamW."""
    t = p.dtype.type
    lr, wd, beta1, beta2, step = h["lr"], h["weight_decay"], h["beta1"], h["beta2"], h["step"]
    d = work[0]
    if wd != 0:
        if h["decoupled"]:
            p *= t(1 - lr * wd)
        else:  # grad.add(p, alpha=wd), a new gradient in the second work array
            g = np.add(np.multiply(p, t(wd), out=work[1]), g, out=work[1])
    exp_avg, exp_avg_sq = state[0], state[1]
    np.subtract(g, exp_avg, out=d)  # exp_avg.lerp_(g, 1 - beta1), as add_(g - exp_avg, alpha=1 - beta1)
    d *= t(1 - beta1)
    exp_avg += d
    exp_avg_sq *= t(beta2)
    np.multiply(g, g, out=d)
    d *= t(1 - beta2)
    exp_avg_sq += d
    src = exp_avg_sq
    if len(state) == 3:
        np.maximum(state[2], exp_avg_sq, out=state[2])
        src = state[2]
    np.sqrt(src, out=d)  # denom = sqrt(v) / sqrt(1 - beta2^step) + eps
    d /= t(math.sqrt(1 - beta2**step))
    d += t(h["eps"])
    np.divide(exp_avg, d, out=d)
    d *= t(-(lr / (1 - beta1**step)))
    p += d


def _sgd(p: Any, g: Any, state: list[Any], h: dict[str, float], work: _Work) -> None:
    """SGD's update (momentum, dampening, Nesterov, weight decay), its temporaries in ``work``, in the ops' order."""
    t = p.dtype.type
    if h["weight_decay"] != 0:  # d_p.add(p, alpha=wd)
        g = np.add(np.multiply(p, t(h["weight_decay"]), out=work[1]), g, out=work[1])
    if state:
        buf = state[0]
        buf *= t(h["momentum"])
        if h["dampening"] != 0:
            buf += np.multiply(g, t(1 - h["dampening"]), out=work[0])
        else:
            buf += g
        if h["nesterov"]:  # d_p.add(buf, alpha=momentum)
            g = np.add(g, np.multiply(buf, t(h["momentum"]), out=work[0]), out=work[1])
        else:
            g = buf
    p += np.multiply(g, t(-h["lr"]), out=work[0])


_UPDATES: dict[str, Callable[[Any, Any, list[Any], dict[str, float], _Work], None]] = {"adam": _adam, "sgd": _sgd}
