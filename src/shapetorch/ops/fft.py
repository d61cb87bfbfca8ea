"""Discrete Fourier transforms (``shapetorch.fft``) and the short-time transforms stft/istft.

Three primitives on NumPy's pocketfft, each on a signal already cut or zero-padded to its length:
c2c (fft/ifft), r2c (rfft) and c2r (irfft). Their gradients are the adjoint transforms, written with
the same primitives, so they differentiate again; stft and istft are composites of them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._engine.primitives import Prim
from .._errors import fail
from .._rules.fft import check_norm, fft_shape, stft_shape
from .._tensor import Tensor
from ._common import check, default_float, dtype_name, promoted
from ._registry import public

Arr = Any

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _c2c(a: Arr, axis: int, forward: bool, norm: Any) -> Arr:
    out = (np.fft.fft if forward else np.fft.ifft)(a, axis=axis, norm=norm)
    return out.astype(a.dtype, copy=False)


def _r2c(a: Arr, axis: int, norm: Any) -> Arr:
    return np.fft.rfft(a, axis=axis, norm=norm).astype(np.complex64 if a.dtype == np.float32 else np.complex128,
                                                       copy=False)


def _c2r(a: Arr, axis: int, n: int, norm: Any) -> Arr:
    return np.fft.irfft(a, n=n, axis=axis, norm=norm).astype(np.float32 if a.dtype == np.complex64 else np.float64,
                                                             copy=False)


def _c2c_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    p = n.params
    return (_C2C(g, axis=p["axis"], forward=not p["forward"], norm=_SWAP[p["norm"]]),)


def _r2c_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    p = n.params
    length = n.inputs[0]._data.shape[p["axis"]]
    full = _resize(g, p["axis"], length)
    return (_REAL_PART(_C2C(full, axis=p["axis"], forward=False, norm=_SWAP[p["norm"]])),)


def _c2r_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    from .creation import ones

    p = n.params
    gi = _R2C(g, axis=p["axis"], norm=_SWAP[p["norm"]])
    m = gi._data.shape[p["axis"]]
    shape = [1] * gi._data.ndim
    shape[p["axis"]] = m
    # made where gi is (a fill on a device, nothing uploaded)
    weight = ones(m, dtype=g.dtype, device=g.device)
    weight[1 : 1 + p["n"] - m] = 2  # the bins that stand for two (conjugate) bins of the full spectrum
    return (gi * weight.reshape(shape),)


def _real_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_TO_COMPLEX(g, dtype=n.inputs[0]._data.dtype),)


def _to_complex_vjp(g: Tensor, n: Any) -> tuple[Any, ...]:
    return (_REAL_PART(g),)


# the real part and the real-to-complex cast, each the other's gradient (both differentiate again)
_REAL_PART = Prim("fft_real_part", lambda a: a.real.copy(), _real_vjp)
_TO_COMPLEX = Prim("fft_to_complex", lambda a, dtype: a.astype(dtype), _to_complex_vjp)


def _complex(x: Tensor) -> Tensor:
    """``x`` as complex (float32 -> complex64, float64 -> complex128), differentiably."""
    if x.is_complex():
        return x
    return _TO_COMPLEX(x, dtype=np.complex64 if dtype_name(x) == "float32" else np.complex128)


def _linear(prim: Prim) -> Any:
    return lambda ts, n: None if ts[0] is None else prim(ts[0], **n.params)


_C2C = Prim("fft_c2c", _c2c, _c2c_vjp)
_R2C = Prim("fft_r2c", _r2c, _r2c_vjp)
_C2R = Prim("fft_c2r", _c2r, _c2r_vjp)
for _p in (_C2C, _R2C, _C2R, _REAL_PART, _TO_COMPLEX):
    _p.jvp = _linear(_p)


def _resize(x: Tensor, axis: int, n: int) -> Tensor:
    """``x`` cut to, or zero-padded at the end to, ``n`` entries along ``axis``."""
    size = x._data.shape[axis]
    if size == n:
        return x
    if size > n:
        out: Tensor = x.narrow(axis, 0, n)
        return out
    from .joining import cat

    shape = list(x._data.shape)
    shape[axis] = n - size
    return cat([x, x.new_zeros(tuple(shape))], axis)


def _float_input(x: Tensor, op: str, allow_complex: bool = True) -> Tensor:
    name = dtype_name(x)
    if name in ("float16", "bfloat16"):
        fail("method_dtype_not_supported_error", op=op, dtype=name, hint=" (the FFTs take float32/float64 data)")
    if x.is_complex():
        if not allow_complex:
            fail("method_dtype_not_supported_error", op=op, dtype=name, hint=f" ({op} expects a real input tensor)")
        return x
    if not x.dtype.is_floating_point:
        return x.to(default_float())
    return x


def _nonempty(x: Tensor, op: str) -> Tensor:
    """torch's CPU FFTs (MKL, pocketfft) refuse a transform with no data points: an empty signal, or an empty batch
    of them. ``x`` is the input cut or padded to the transform's length (``n`` may pad an empty signal)."""
    if x._data.size == 0:
        fail("argument_error_invalid", op=op, problem="Invalid number of data points (0) specified")
    return x


def _prepare(input: Tensor, n: int | None, dim: Any, norm: str | None, kind: str, op: str) -> tuple[int, int, str]:
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}(): argument 'dim' must be int, not {type(dim).__name__}")
    d, length, _ = check(fft_shape, input._data.shape, n, dim, kind, op=op)
    return d, length, check(check_norm, norm, op=op)


def _c2c_op(input: Tensor, n: int | None, dim: int, norm: str | None, forward: bool, op: str) -> Tensor:
    d, length, mode = _prepare(input, n, dim, norm, "c2c", op)
    x = _complex(_float_input(input, op))
    return _C2C(_nonempty(_resize(x, d, length), op), axis=d, forward=forward, norm=mode)


@public("fft", method=False)
def fft_fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``dim`` (cut or zero-padded to ``n``)."""
    return _c2c_op(input, n, dim, norm, True, "fft")


@public("fft", method=False)
def fft_ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_fft`."""
    return _c2c_op(input, n, dim, norm, False, "ifft")


@public("fft", method=False)
def fft_rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The FFT of a real signal: the n//2 + 1 non-negative frequencies."""
    d, length, mode = _prepare(input, n, dim, norm, "r2c", "rfft")
    x = _float_input(input, "rfft", allow_complex=False)
    return _R2C(_nonempty(_resize(x, d, length), "rfft"), axis=d, norm=mode)


@public("fft", method=False)
def fft_irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_rfft`: a real signal of length ``n`` (default 2 * (size - 1))."""
    d, length, mode = _prepare(input, n, dim, norm, "c2r", "irfft")
    x = _complex(_float_input(input, "irfft"))
    return _C2R(_nonempty(_resize(x, d, length // 2 + 1), "irfft"), axis=d, n=length, norm=mode)


# -- short-time transforms ----------------------------------------------------------------------------------


def _full_window(window: Tensor | None, win_length: int, n_fft: int, like: Tensor) -> Tensor:
    """The window (default: ones) zero-padded on both sides to ``n_fft``, centred as torch does."""
    from .joining import cat

    w = like.new_ones((win_length,)) if window is None else window
    left = (n_fft - win_length) // 2
    if win_length == n_fft:
        return w
    return cat([w.new_zeros((left,)), w, w.new_zeros((n_fft - win_length - left,))], 0)


def _frame_index(frames: int, n_fft: int, hop: int) -> Any:
    from .creation import tensor

    return tensor((np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]).astype(np.int64))


@public("fft")
def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided: bool | None = None, return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform of a (B?, L) signal: (B?, n_fft//2 + 1 or n_fft, frames), complex.

    As torch 2.x: ``return_complex`` must be given for real inputs (False returns ``view_as_real``).
    """
    op = "stft"
    cplx = input.is_complex() or (window is not None and window.is_complex())
    if return_complex is None and not cplx:
        fail("argument_error_invalid", op=op, problem="stft requires the return_complex parameter be given for real "
                                                      "inputs (return_complex=True is recommended)")
    if align_to_window is not None and center:
        fail("argument_error_invalid", op=op, problem="align_to_window should only be set when center = false")
    if not (input.dtype.is_floating_point or input.is_complex()) or dtype_name(input) in ("float16", "bfloat16"):
        fail("method_dtype_not_supported_error", op=op, dtype=dtype_name(input),
             hint=" (stft expects a tensor of float32/float64 or complex values)")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    one = onesided if onesided is not None else not cplx
    if one and cplx:
        fail("argument_error_invalid", op=op, problem="cannot have onesided output if window or input is complex")
    wshape = None if window is None else tuple(window._data.shape)
    check(stft_shape, input._data.shape, n_fft, hop, win, wshape, center, one, op=op)
    x = input
    if center:
        from .convolution import pad

        lead = (1,) * (3 - x._data.ndim)
        x3 = x.reshape(lead + tuple(x._data.shape))
        x = pad(x3, [n_fft // 2, n_fft // 2], mode=pad_mode).reshape(tuple(x._data.shape[:-1]) + (-1,))
    length = x._data.shape[-1]
    start = (n_fft - win) // 2 if align_to_window else 0
    frames_n = 1 + (length - start - n_fft) // hop
    frames = x[..., _frame_index(frames_n, n_fft, hop) + start]  # (B?, frames, n_fft)
    w = _full_window(window, win, n_fft, x)
    common = promoted(frames, w)
    frames = frames.to(common) * w.to(common)
    norm = "ortho" if normalized else "backward"
    spec = fft_rfft(frames, dim=-1, norm=norm) if one else fft_fft(frames, dim=-1, norm=norm)
    out: Tensor = spec.transpose(-1, -2)
    if return_complex is False:
        from .complex import view_as_real

        return view_as_real(out)
    return out


@public("fft")
def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False, onesided: bool | None = None,
          length: int | None = None, return_complex: bool = False) -> Tensor:
    """The inverse of :func:`stft` by overlap-add, divided by the summed squared window."""
    op = "istft"
    if not input.is_complex():
        fail("method_dtype_not_supported_error", op=op, dtype=dtype_name(input),
             hint=" (istft requires a complex-valued input tensor, as stft returns with return_complex=True)")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input._data.ndim:
        fail("dimension_error_zero_dim", op=op)  # (torch's IndexError)
    if input._data.ndim not in (2, 3):
        fail("argument_error_invalid", op=op, problem=f"expected a 2D or 3D tensor, got shape {tuple(input._data.shape)}")
    fft_size, frames_n = input._data.shape[-2:]
    one = onesided if onesided is not None else fft_size != n_fft
    if one and (return_complex or (window is not None and window.is_complex())):
        fail("argument_error_invalid", op=op, problem="cannot have onesided output if window or input is complex")
    expected = n_fft // 2 + 1 if one else n_fft
    if fft_size != expected:
        fail("argument_error_invalid", op=op,
             problem=f"expected the frequency dim to have size {expected} (n_fft={n_fft}), got {fft_size}")
    if hop <= 0 or hop > win or win <= 0 or win > n_fft:
        fail("argument_error_invalid", op=op, problem=f"expected 0 < hop_length <= win_length <= n_fft, got "
                                                      f"hop_length={hop}, win_length={win}")
    if window is not None and tuple(window._data.shape) != (win,):
        fail("argument_error_invalid", op=op, problem=f"expected a 1D window of size win_length={win}, got "
                                                      f"{tuple(window._data.shape)}")
    if frames_n == 0:
        fail("argument_error_invalid", op=op, problem="expected at least one frame")
    norm = "ortho" if normalized else "backward"
    spec = input.transpose(-1, -2)  # (B?, frames, freq)
    if return_complex:
        frames = fft_ifft(spec, dim=-1, norm=norm)
    else:  # a real signal: the half spectrum (the first n_fft//2 + 1 bins of a two-sided one), as torch
        frames = fft_irfft(spec if one else spec.narrow(-1, 0, n_fft // 2 + 1), n=n_fft, dim=-1, norm=norm)
    w = _full_window(window, win, n_fft, frames if not frames.is_complex() else _REAL_PART(frames))
    common = promoted(frames, w)
    frames = frames.to(common) * w.to(common)
    total = n_fft + hop * (frames_n - 1)
    index = _frame_index(frames_n, n_fft, hop).reshape(-1)
    from .scatter import index_add

    lead = tuple(frames._data.shape[:-2])
    y = index_add(frames.new_zeros(lead + (total,)), len(lead), index, frames.reshape(lead + (-1,)))
    sq = (w * w).expand(frames_n, n_fft).reshape(-1)  # torch divides by the summed window.pow(2)
    env = index_add(sq.new_zeros((total,)), 0, index, sq)
    start = n_fft // 2 if center else 0
    end = total - n_fft // 2 if center else total
    if length is not None:
        end = start + length
    end_in = min(end, total)
    y = y[..., start:end_in]
    env = env[start:end_in]
    if not env._data.size or float(np.abs(env._data).min()) < 1e-11:
        fail("argument_error_invalid", op=op, problem="window overlap add min is below 1e-11: the window does not "
                                                      "satisfy the NOLA condition")
    y = y / env
    if end > end_in:
        from .joining import cat

        y = cat([y, y.new_zeros(lead + (end - end_in,))], -1)
    out: Tensor = y
    return out



# -- N-dimensional transforms, frequencies and shifts ---------------------------------------------------------------
# An N-D DFT is the 1-D DFT along each of its dims in turn (the transform is separable, and each 1-D norm scales by
# its own length, so the product is the N-D norm). The Hermitian pair is the real pair on the conjugate with the
# norm's direction swapped, as torch defines them.

_SWAPPED = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _dims_and_sizes(input: Tensor, s: Any, dim: Any, default_last: int | None, op: str) -> tuple[list[int], list[int | None]]:
    from .._rules.axes import wrap_dim

    nd = input._data.ndim
    if dim is None:
        if s is None:
            dims = list(range(nd)) if default_last is None else list(range(nd - default_last, nd))
        else:
            dims = list(range(nd - len(s), nd))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    dims = [check(wrap_dim, d, nd, op) for d in dims]
    if len(set(dims)) != len(dims):
        fail("argument_error_invalid", op=op, problem=f"{op} dims must be unique")
    sizes: list[int | None] = [None] * len(dims) if s is None else [None if n == -1 else int(n) for n in s]
    if len(sizes) != len(dims):
        fail("argument_error_invalid", op=op, problem="When given, dim and shape arguments must have the same length")
    return dims, sizes


def _c2c_n(input: Tensor, s: Any, dim: Any, norm: str | None, forward: bool, last: int | None, op: str) -> Tensor:
    dims, sizes = _dims_and_sizes(input, s, dim, last, op)
    x = input
    for d, n in zip(dims, sizes):
        x = _c2c_op(x, n, d, norm, forward, op)
    return x if dims else _complex(_float_input(input, op)).clone()


def _r2c_n(input: Tensor, s: Any, dim: Any, norm: str | None, last: int | None, op: str) -> Tensor:
    dims, sizes = _dims_and_sizes(input, s, dim, last, op)
    x = fft_rfft(input, sizes[-1], dims[-1], norm)
    for d, n in zip(dims[:-1], sizes[:-1]):
        x = _c2c_op(x, n, d, norm, True, op)
    return x


def _c2r_n(input: Tensor, s: Any, dim: Any, norm: str | None, last: int | None, op: str) -> Tensor:
    dims, sizes = _dims_and_sizes(input, s, dim, last, op)
    x = input
    for d, n in zip(dims[:-1], sizes[:-1]):
        x = _c2c_op(x, n, d, norm, False, op)
    return fft_irfft(x, sizes[-1], dims[-1], norm)


@public("fft", method=False)
def fft_fft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _c2c_n(input, s, dim, norm, True, 2, "fft2")


@public("fft", method=False)
def fft_ifft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _c2c_n(input, s, dim, norm, False, 2, "ifft2")


@public("fft", method=False)
def fft_fftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The N-D DFT over ``dim`` (every dim, or the last ``len(s)``), each cut or zero-padded to ``s``."""
    return _c2c_n(input, s, dim, norm, True, None, "fftn")


@public("fft", method=False)
def fft_ifftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _c2c_n(input, s, dim, norm, False, None, "ifftn")


@public("fft", method=False)
def fft_rfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _r2c_n(input, s, dim, norm, 2, "rfft2")


@public("fft", method=False)
def fft_irfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _c2r_n(input, s, dim, norm, 2, "irfft2")


@public("fft", method=False)
def fft_rfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    """The N-D DFT of a real signal: the last dim keeps its non-negative frequencies."""
    return _r2c_n(input, s, dim, norm, None, "rfftn")


@public("fft", method=False)
def fft_irfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _c2r_n(input, s, dim, norm, None, "irfftn")


@public("fft", method=False)
def fft_hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: a real result of length n."""
    return fft_irfft(_complex(_float_input(input, "hfft")).conj(), n, dim, _SWAPPED[norm])


@public("fft", method=False)
def fft_ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None) -> Tensor:
    """The inverse of :func:`fft_hfft`: the first half of a real signal's inverse DFT."""
    out: Tensor = fft_rfft(input, n, dim, _SWAPPED[norm]).conj()
    return out


@public("fft", method=False)
def fft_hfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    return _c2r_n(_complex(_float_input(input, "hfft2")).conj(), s, dim, _SWAPPED[norm], 2, "hfft2")


@public("fft", method=False)
def fft_ihfft2(input: Tensor, s: Any = None, dim: Any = (-2, -1), norm: str | None = None) -> Tensor:
    out: Tensor = _r2c_n(input, s, dim, _SWAPPED[norm], 2, "ihfft2").conj()
    return out


@public("fft", method=False)
def fft_hfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    return _c2r_n(_complex(_float_input(input, "hfftn")).conj(), s, dim, _SWAPPED[norm], None, "hfftn")


@public("fft", method=False)
def fft_ihfftn(input: Tensor, s: Any = None, dim: Any = None, norm: str | None = None) -> Tensor:
    out: Tensor = _r2c_n(input, s, dim, _SWAPPED[norm], None, "ihfftn").conj()
    return out


@public("fft", method=False)
def fft_fftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point DFT: ``[0, 1, ..., -2, -1] / (d * n)``."""
    from .creation import tensor

    values = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)]) / (d * n)
    return tensor(values, dtype=dtype or default_float(), device=device, requires_grad=requires_grad)


@public("fft", method=False)
def fft_rfftfreq(n: int, d: float = 1.0, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of an n-point real DFT: ``[0, 1, ..., n // 2] / (d * n)``."""
    from .creation import tensor

    values = np.arange(0, n // 2 + 1) / (d * n)
    return tensor(values, dtype=dtype or default_float(), device=device, requires_grad=requires_grad)


def _shift(input: Tensor, dim: Any, sign: int) -> Tensor:
    dims = list(range(input._data.ndim)) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if not dims:  # torch rolls by no shifts along no dims, which roll refuses (a 0-d input, or dim=())
        fail("argument_error_invalid", op="fftshift" if sign > 0 else "ifftshift", problem="`shifts` required")
    shifts = [sign * (input._data.shape[d] // 2) for d in dims]
    out: Tensor = input.roll(shifts, dims)
    return out


@public("fft", method=False)
def fft_fftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The zero frequency moved to the centre (a roll by n // 2 along each dim)."""
    return _shift(input, dim, 1)


@public("fft", method=False)
def fft_ifftshift(input: Tensor, dim: Any = None) -> Tensor:
    """The inverse of :func:`fft_fftshift`."""
    return _shift(input, dim, -1)
