"""Random sampling: Generator, manual_seed, rand, randn, randint, randperm, normal, bernoulli, and the
in-place samplers (``uniform_``, ``normal_``). On the CPU, streams come from NumPy's PCG64: seeded runs repeat
exactly, but the numbers differ from torch's for the same seed (documented in docs/compatibility.md).

On a device whose backend draws numbers itself (``backend.random``: WebGPU), rand, randn, normal, bernoulli,
``uniform_``, ``normal_``, ``bernoulli_``, ``poisson``, ``randperm`` (``backend.randperm``), ``multinomial`` (a
composite of those draws, nothing read back) and so dropout are drawn there by a counter-based generator, as
torch's CUDA Philox: a generator of that device holds a seed and an offset, each call draws from
(seed, offset, element index) and advances the offset by one, and ``manual_seed`` resets both. Nothing is
uploaded, and the numbers differ from the CPU's for the same seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._device import backend, to_device
from .._dtype import get_default_dtype, to_dtype
from .._dtype import int32 as _I32
from .._engine.primitives import Prim
from .._errors import fail
from .._grad_mode import STATE
from .._tensor import Tensor
from ..backends.numpy_backend import NP_DTYPE
from ._common import (
    allocating,
    as_node,
    be,
    broadcast2,
    check_fill_value,
    int_list,
    need_floating,
    new_sizes,
    write_inplace,
)
from ._registry import _guarded, method, public
from .creation import _on, fill


class Generator:
    """``torch.Generator``: an independent random stream with its own seed and state."""

    def __init__(self, device: Any = "cpu") -> None:
        self.device = device
        self._seed = 67280421310721  # torch's default initial seed
        # the NumPy stream is made on the first draw: the default generator exists from import on, and making
        # one imports numpy.random (about 20 ms, a tenth of the first op's time, for a program that may draw none)
        self._stream: np.random.Generator | None = None
        self._offset = 0  # calls drawn on a device since the seed was set (the counter-based streams)

    @property
    def _rng(self) -> np.random.Generator:
        """The NumPy stream of the CPU draws, seeded with ``_seed`` when first needed."""
        if self._stream is None:
            self._stream = np.random.Generator(np.random.PCG64(self._seed))
        return self._stream

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._stream = None
        self._offset = 0
        return self

    def _next_offset(self) -> int:
        off = self._offset
        self._offset += 1
        return off

    def seed(self) -> int:
        s = int(np.random.SeedSequence().generate_state(2, np.uint64)[0]) % (2**63)
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Tensor:
        state = (self._rng.bit_generator.state, self._seed, self._offset)
        raw = np.frombuffer(repr(state).encode(), dtype=np.uint8).copy()
        return Tensor._make(raw)

    def set_state(self, new_state: Tensor) -> Generator:
        import ast

        state = ast.literal_eval(bytes(new_state._data.tobytes()).decode())
        if isinstance(state, dict):  # a state saved before the device offsets were part of it
            state = (state, self._seed, self._offset)
        self._rng.bit_generator.state, self._seed, self._offset = state
        return self


default_generator = Generator()
_DEVICE_GENERATORS: dict[str, Generator] = {}  # the default generator of each device type other than cpu


def _device_generator(dev: Any) -> Generator:
    """The default generator of device ``dev`` (made on first use with the CPU's seed, as torch seeds every device
    from ``manual_seed``)."""
    g = _DEVICE_GENERATORS.get(dev.type)
    if g is None:
        g = _DEVICE_GENERATORS[dev.type] = Generator(dev.type).manual_seed(default_generator.initial_seed())
    return g


def manual_seed(seed: int) -> Generator:
    """Seed the CPU's generator and every device's (their offsets start again at 0)."""
    for g in _DEVICE_GENERATORS.values():
        g.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    s = default_generator.seed()
    for g in _DEVICE_GENERATORS.values():
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    return default_generator.initial_seed()


def _snapshot() -> Any:
    """A function restoring every default generator (the CPU's and each device's) to its state now: vmap's
    ``randomness="same"`` replays the draws of each sample from it."""
    cpu = default_generator.get_state()
    dev = {k: (g._seed, g._offset) for k, g in _DEVICE_GENERATORS.items()}

    def restore() -> None:
        default_generator.set_state(cpu)
        for k in list(_DEVICE_GENERATORS):
            if k in dev:
                _DEVICE_GENERATORS[k]._seed, _DEVICE_GENERATORS[k]._offset = dev[k]
            else:  # made since: made again from the same seed at its next use
                del _DEVICE_GENERATORS[k]

    return restore


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def _rng(generator: Generator | None) -> np.random.Generator:
    return (generator or default_generator)._rng


def _on_device(dev: Any) -> Any:
    """The backend of ``dev`` when it draws random numbers itself, else None (the CPU: NumPy's PCG64)."""
    d = to_device(dev)
    if d.type == "cpu":
        return None
    be_ = backend(d.type)
    return be_ if hasattr(be_, "random") else None


def _draw(dist: str, shape: Any, dtype: Any, dev: Any, generator: Generator | None, op: str, a: float = 0.0,
          b: float = 0.0, p: Tensor | None = None) -> Tensor:
    """A tensor drawn on the device ``dev`` by its counter-based generator (``_on_device(dev)`` is not None)."""
    d = to_device(dev)
    if generator is None:
        generator = _device_generator(d)
    elif to_device(generator.device).type != d.type:  # torch: "Expected a 'cuda' device type for generator"
        fail("device_error_requires", op=op,
             problem=f"expected a '{d.type}' device type for generator but found '{to_device(generator.device).type}'")
    data = backend(d.type).random(dist, tuple(shape), np.dtype(NP_DTYPE[dtype]), generator._seed,
                                  generator._next_offset(), a, b, None if p is None else p._data, op)
    return Tensor._make(data, d)


def _float_dtype(dtype: Any, op: str) -> Any:
    d = to_dtype(dtype) if dtype is not None else get_default_dtype()
    if not (d.is_floating_point or d.is_complex):
        fail("method_dtype_not_supported_error", op=op, dtype=d.name, hint=" (floating point only)")
    return d


@public("random", method=False)
def rand(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
         requires_grad: bool = False) -> Tensor:
    """Uniform on [0, 1)."""
    d = _float_dtype(dtype, "rand")
    if _on_device(device) is not None:
        return _draw("uniform", new_sizes(size, "rand"), d, device, generator, "rand", 0.0, 1.0).requires_grad_(
            requires_grad)
    with allocating("rand"):
        arr = _rng(generator).random(new_sizes(size, "rand"))
    return _on(arr.astype(NP_DTYPE[d]), device, requires_grad)


@public("random", method=False)
def randn(*size: Any, generator: Generator | None = None, dtype: Any = None, device: Any = None,
          requires_grad: bool = False) -> Tensor:
    """Standard normal."""
    d = _float_dtype(dtype, "randn")
    if _on_device(device) is not None:
        return _draw("normal", new_sizes(size, "randn"), d, device, generator, "randn", 0.0, 1.0).requires_grad_(
            requires_grad)
    with allocating("randn"):
        arr = _rng(generator).standard_normal(new_sizes(size, "randn"))
    return _on(arr.astype(NP_DTYPE[d]), device, requires_grad)


def _check_random_bounds(low: int, high: int, dtype: str, op: str) -> None:
    """torch's check_random_bounds: no complex dtype, and [low, high) within what the dtype holds."""
    if dtype.startswith("complex"):
        fail("method_dtype_not_supported_error", op=op, dtype=dtype, hint=" (random bounds need a real dtype)")
    if dtype == "bool" or dtype.startswith(("int", "uint")):
        lo, hi = (0, 1) if dtype == "bool" else (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
        if low < lo or high - 1 > hi:
            fail("argument_error_invalid", op=op, problem=f"[{low}, {high}) is out of bounds for {dtype}")


@public("random", method=False)
def randint(low: int, high: Any = None, size: Any = None, *, generator: Generator | None = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False) -> Tensor:
    """Integers in ``[low, high)``; ``randint(high, size)`` starts at 0."""
    if size is None:
        low, high, size = 0, low, high
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = to_dtype(dtype) if dtype is not None else to_dtype("int64")
    _check_random_bounds(low, high, d.name, "randint")
    if _on_device(device) is not None:  # drawn by the device's counter-based generator: nothing uploaded
        return _draw("randint", int_list((size,), "randint"), d, device, generator, "randint", low,
                     high).requires_grad_(requires_grad)
    arr = _rng(generator).integers(low, high, size=int_list((size,), "randint"))
    return _on(arr.astype(NP_DTYPE[d]), device, requires_grad)


@public("random", method=False)
def randperm(n: int, *, generator: Generator | None = None, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    d = to_dtype(dtype) if dtype is not None else to_dtype("int64")
    be_ = _on_device(device)
    if be_ is not None and hasattr(be_, "randperm"):  # random keys sorted on the device: nothing uploaded
        dev = to_device(device)
        if generator is None:
            generator = _device_generator(dev)
        elif to_device(generator.device).type != dev.type:
            fail("device_error_requires", op="randperm", problem=f"expected a '{dev.type}' device type for generator "
                 f"but found '{to_device(generator.device).type}'")
        data = be_.randperm(int(n), np.dtype(NP_DTYPE[d]), generator._seed, generator._next_offset())
        return Tensor._make(data, dev).requires_grad_(requires_grad)
    return _on(_rng(generator).permutation(n).astype(NP_DTYPE[d]), device, requires_grad)


@public("random", method=False)
def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, *, generator: Generator | None = None,
           dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Normal samples; ``mean`` and ``std`` may be tensors (broadcast) or numbers (then ``size`` is needed)."""
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if size is not None or requires_grad is not False:  # torch's tensor overloads take neither
            fail("argument_error_refused", op="normal", problem="with a Tensor mean or std, size and requires_grad are "
                 "not taken (the output has their broadcast shape)")
        like = mean if isinstance(mean, Tensor) else std
        need_floating(like, "normal", complex_=True)
        shape = broadcast2(tuple(np.shape(mean._data if isinstance(mean, Tensor) else mean)),
                           tuple(np.shape(std._data if isinstance(std, Tensor) else std)), "normal")
        if _on_device(like.device) is not None:
            z = _draw("normal", shape, like.dtype, like.device, generator, "normal", 0.0, 1.0)
        else:
            z = _on(_rng(generator).standard_normal(shape).astype(like._data.dtype), like.device)
        return z * std + mean
    d = _float_dtype(dtype, "normal")
    if _on_device(device) is not None:
        return _draw("normal", int_list((size,), "normal"), d, device, generator, "normal", float(mean),
                     float(std)).requires_grad_(requires_grad)
    arr = _rng(generator).normal(mean, std, size=int_list((size,), "normal"))
    return _on(arr.astype(NP_DTYPE[d]), device, requires_grad)


@public("random")
def bernoulli(input: Tensor, p: Any = None, *, generator: Generator | None = None) -> Tensor:
    if p is None:
        need_floating(input, "bernoulli")
    elif input._data.dtype.kind == "c":
        need_floating(input, "bernoulli")
    if _on_device(input.device) is not None:  # a probability tensor is checked on the device (at the next sync)
        if p is not None and not 0 <= p <= 1:
            fail("argument_error_invalid", op="bernoulli", problem="expected every probability p to satisfy 0 <= p <= 1")
        shape = tuple(input._data.shape)
        return _draw("bernoulli", shape, input.dtype, input.device, generator, "bernoulli", 0.0 if p is None else p,
                     0.0, input.detach() if p is None else None)
    probs = input._data if p is None else np.full(input._data.shape, p)
    if not np.all((probs >= 0) & (probs <= 1)):  # NaN fails both
        fail("argument_error_invalid", op="bernoulli", problem="expected every probability p to satisfy 0 <= p <= 1")
    arr = (_rng(generator).random(input._data.shape) < probs).astype(input._data.dtype)
    return _on(arr, input.device)


def dropout_mask(shape: tuple[int, ...], p: float, dtype: Any, device: Any) -> Tensor:
    """Dropout's scaled keep-mask (``1 / (1 - p)`` with probability ``1 - p``, else 0), for ``0 <= p < 1``: one
    kernel on a device that draws itself; on the CPU the comparison of a uniform draw."""
    if _on_device(device) is not None:
        return _draw("dropout", shape, dtype, device, None, "dropout", p, 1.0 / (1.0 - p))
    mask: Tensor = (rand(shape, dtype=dtype, device=device) >= p).to(dtype) / (1 - p)
    return mask


@public("random", method=False)
def rand_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return rand(input._data.shape, dtype=dtype or input.dtype, device=device or input.device, requires_grad=requires_grad)


@public("random", method=False)
def randn_like(input: Tensor, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return randn(input._data.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


@public("random", method=False)
def randint_like(input: Tensor, low: int, high: Any = None, *, dtype: Any = None, device: Any = None) -> Tensor:
    if high is None:  # randint_like(input, high)
        low, high = 0, low
    return randint(low, high, input._data.shape, dtype=dtype or input.dtype, device=device or input.device)


def _sampler(name: str, draw: Any, numbers: tuple[str, ...] = (), on_device: Any = None) -> None:
    """An in-place sampler: ``draw(rng, self, *args)`` makes the values on the CPU. ``numbers``: the parameters
    torch's schema types as Python numbers (a tensor there is a TypeError); ``on_device(self, generator, *args)``
    draws on a device with its own generator."""

    def fn(self: Tensor, *args: Any, generator: Generator | None = None) -> Tensor:
        for position, (param, a) in enumerate(zip(numbers, args), 1):
            if isinstance(a, Tensor):
                fail("argument_error_type", op=name, name=param, position=f" (position {position})", expected="float",
                     got="Tensor")
        if on_device is not None and _on_device(self.device) is not None:
            return write_inplace(self, on_device(self, generator, *args), name)
        arr = draw(_rng(generator), self, *args).astype(self._data.dtype)
        return write_inplace(self, _on(arr, self.device), name)

    fn.__name__ = name
    method(name, fn)


def _bernoulli_(self: Tensor, generator: Generator | None, p: Any = 0.5) -> Tensor:
    shape = tuple(self._data.shape)
    if isinstance(p, Tensor):
        return _draw("bernoulli", shape, self.dtype, self.device, generator, "bernoulli_", 0.0, 0.0,
                     p.detach().to(self.device).expand(*shape))
    if not 0 <= p <= 1:
        fail("argument_error_invalid", op="bernoulli_", problem=f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _draw("bernoulli", shape, self.dtype, self.device, generator, "bernoulli_", float(p))


_sampler("uniform_", lambda r, t, a=0.0, b=1.0: r.uniform(a, b, t._data.shape), ("from", "to"),
         lambda t, g, a=0.0, b=1.0: _draw("uniform", t._data.shape, t.dtype, t.device, g, "uniform_", a, b))
_sampler("normal_", lambda r, t, mean=0.0, std=1.0: r.normal(mean, std, t._data.shape), ("mean", "std"),
         lambda t, g, mean=0.0, std=1.0: _draw("normal", t._data.shape, t.dtype, t.device, g, "normal_", mean, std))
_sampler("bernoulli_", lambda r, t, p=0.5: r.random(t._data.shape) < p, (), _bernoulli_)
def _random_bounds(t: Tensor, args: tuple[Any, ...]) -> tuple[int, int]:
    """torch's ``random_``: ``()`` is [0, 2^mantissa] for a floating tensor (every integer it holds exactly), the
    whole range of an integer one; ``(to)`` is [0, to); ``(from, to)`` is [from, to) (``to=None``: as ``()``)."""
    np_dtype = np.dtype(t._data.dtype) if t._device.type == "cpu" else np.dtype(NP_DTYPE[t.dtype])
    if np_dtype.kind == "f" or t.dtype.name == "bfloat16":
        top = 2 ** {"float16": 11, "bfloat16": 8, "float32": 24}.get(t.dtype.name, 53) + 1
    elif np_dtype.kind == "b":
        top = 2
    else:
        top = int(np.iinfo(np_dtype).max) + 1
    low, high = (0, top) if not args else (0, args[0]) if len(args) == 1 else (args[0], args[1] if args[1] is not None else top)
    if high <= low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return int(low), int(high)


_sampler("random_", lambda r, t, *args: r.integers(*_random_bounds(t, args), t._data.shape), (),
         lambda t, g, *args: _draw("randint", t._data.shape, t.dtype, t.device, g, "random_", *_random_bounds(t, args)))
_sampler("exponential_", lambda r, t, lambd=1.0: r.exponential(1.0 / lambd, t._data.shape), ("lambd",),
         lambda t, g, lambd=1.0: _draw("exponential", t._data.shape, t.dtype, t.device, g, "exponential_", lambd))
# the rarer samplers draw on the CPU and upload on other devices
_sampler("cauchy_", lambda r, t, median=0.0, sigma=1.0: median + sigma * r.standard_cauchy(t._data.shape),
         ("median", "sigma"))
_sampler("log_normal_", lambda r, t, mean=1.0, std=2.0: r.lognormal(mean, std, t._data.shape), ("mean", "std"))
_sampler("geometric_", lambda r, t, p: r.geometric(_probability(p, "geometric_"), t._data.shape), ("p",))


def _probability(p: float, op: str) -> float:
    if not 0 < p < 1:
        fail("argument_error_invalid", op=op, problem=f"{op} expects p to be in (0, 1), but got p={p}")
    return p
def _fill(self: Tensor, value: Any, name: str) -> Tensor:
    """fill_/zero_: on a device the value is written by a kernel (a 0-d tensor on the same device is read there)."""
    if not isinstance(value, Tensor):
        value = check_fill_value(value, self.dtype.name, name)
    elif value._data.ndim:
        fail("argument_error_invalid", op=name,
             problem=f"only supports 0-dimension value tensor but got tensor with {value._data.ndim} dimensions")
    elif ((STATE.enabled and (value.requires_grad or self.requires_grad)) or value._fw_grads is not None) and (
            self.is_floating_point() or self.is_complex()):
        # a 0-d tensor value in a graph, or a dual one: torch's FillBackward3 (the old values' gradient is zero, the
        # value's the sum of the result's; its tangent flows), which is the out-of-place fill's. An integer or bool
        # tensor takes the value's number out of the graph (docs/compatibility.md: torch marks it as requiring grad)
        return write_inplace(self, as_node(fill(self, value), "FillBackward3", self, value), name)
    if self._device.type != "cpu":
        if isinstance(value, Tensor) and value._device == self._device and value._data.ndim == 0:
            return write_inplace(self, value.detach().to(self.dtype).expand(*self._data.shape), name)
        v = value.item() if isinstance(value, Tensor) else value
        return write_inplace(self, Tensor._make(be(self).full(tuple(self._data.shape), v, self._data.dtype),
                                                self._device), name, temporary=True)
    v = value.item() if isinstance(value, Tensor) else value
    return write_inplace(self, _on(np.full_like(self._data, v), self.device), name)


def zero_(input: Tensor) -> Tensor:
    """Fill with zeros, in place."""
    return _fill(input, 0, "zero_")


method("zero_", _guarded("zero_", zero_))
method("fill_", lambda self, value: _fill(self, value, "fill_"))


# -- multinomial, poisson ------------------------------------------------------------------------------------

def _check_multinomial(input: Tensor, num_samples: int, replacement: bool) -> None:
    if not input.dtype.is_floating_point:
        fail("method_dtype_not_supported_error", op="multinomial", dtype=input.dtype.name,
             hint=" (multinomial only supports floating-point dtypes for input)")
    if input._data.ndim not in (1, 2):
        fail("argument_error_invalid", op="multinomial", problem="prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        fail("argument_error_invalid", op="multinomial", problem="cannot sample n_sample <= 0 samples")
    n_cat = input._data.shape[-1]
    if not replacement and num_samples > n_cat:
        fail("argument_error_invalid", op="multinomial",
             problem=f"cannot sample n_sample > prob_dist.size(-1) samples without replacement ({num_samples} > {n_cat})")
    if _on_device(input.device) is not None:  # the values are checked on the device (see _multinomial_on_device)
        return
    p = np.asarray(input.detach().cpu().numpy(), dtype=np.float64)
    if p.size and (not np.all(np.isfinite(p)) or np.any(p < 0)):
        fail("argument_error_invalid", op="multinomial",
             problem="probability tensor contains either `inf`, `nan` or element < 0")
    if np.any(p.reshape(-1, n_cat).sum(-1) <= 0) if p.size else n_cat == 0:
        fail("argument_error_invalid", op="multinomial", problem="invalid multinomial distribution (sum of probabilities "
             "<= 0)")


@public("random")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *, generator: Generator | None = None,
                out: Tensor | None = None) -> Tensor:
    """Category indices drawn by the weights in the last dim of ``input`` (1-D or 2-D), int64.

    Without replacement: the ``num_samples`` largest ``p / E`` with ``E ~ Exp(1)`` (as torch samples),
    so zero-weight categories come last."""
    _check_multinomial(input, num_samples, replacement)
    if _on_device(input.device) is not None:
        res = _multinomial_on_device(input, num_samples, replacement, generator)
        return res if out is None else write_inplace(out, res, "multinomial")
    rng = _rng(generator)
    p = np.asarray(input.detach().cpu().numpy(), dtype=np.float64)
    rows = p.reshape(-1, p.shape[-1])
    if replacement:
        cdf = np.cumsum(rows, axis=-1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows.shape[0], num_samples))
        idx = np.stack([np.searchsorted(c, ui, side="right") for c, ui in zip(cdf, u)]) if rows.shape[0] else \
            np.zeros((0, num_samples), np.int64)
        idx = np.minimum(idx, rows.shape[-1] - 1)
        while True:  # a zero-weight category is never drawn, even at the CDF's flat steps
            bad = rows[np.arange(rows.shape[0])[:, None], idx] == 0
            if not bad.any():
                break
            idx = np.where(bad, np.minimum(idx + 1, rows.shape[-1] - 1), idx)
    else:
        keys = rows / rng.exponential(size=rows.shape)
        idx = np.argsort(-keys, axis=-1, kind="stable")[:, :num_samples]
    res = _on(idx.astype(np.int64).reshape(p.shape[:-1] + (num_samples,)), input.device)
    return res if out is None else write_inplace(out, res, "multinomial")


def _multinomial_on_device(input: Tensor, num_samples: int, replacement: bool, generator: Generator | None) -> Tensor:
    """multinomial drawn on a device that draws itself, nothing read back. With replacement: each draw is a binary
    search of ``u · total`` in the row's cumulative sums (``searchsorted(right=True)`` never lands on a category of
    weight 0, whose step is flat; a draw that rounding puts past the end goes to the last category of positive
    weight). Without: the ``num_samples`` largest ``p / E``, ``E ~ Exp(1)``, as on the CPU. The checks of the
    values (no ``inf``, NaN or negative weight; no row summing to 0) run on the device and raise torch's errors at
    the next sync, as ``bernoulli``'s."""
    from .reduction import argmax
    from .scan import cumsum
    from .sorting import argsort, searchsorted

    dev, n_cat = input.device, input._data.shape[-1]
    rows = input.detach().reshape(-1, n_cat).float()
    bad = ~rows.isfinite() | (rows < 0)
    be_ = backend(to_device(dev).type)
    be_.check_range(bad.any().to(_I32)._data, 0, 1, "argument_error_invalid", "multinomial",
                    problem="probability tensor contains either `inf`, `nan` or element < 0")
    n_rows = rows._data.shape[0]
    if replacement:
        cdf = cumsum(rows, -1)
        be_.check_range((cdf[:, -1] <= 0).any().to(_I32)._data, 0, 1, "argument_error_invalid", "multinomial",
                        problem="invalid multinomial distribution (sum of probabilities <= 0)")
        u = _draw("uniform", (n_rows, num_samples), rows.dtype, dev, generator, "multinomial", 0.0, 1.0)
        idx = searchsorted(cdf, u * cdf[:, -1:], right=True)
        last = (n_cat - 1) - argmax((rows > 0).flip(-1).to(_I32), -1, keepdim=True)
        idx = idx.minimum(last)
    else:
        be_.check_range((rows.sum(-1) <= 0).any().to(_I32)._data, 0, 1, "argument_error_invalid", "multinomial",
                        problem="invalid multinomial distribution (sum of probabilities <= 0)")
        e = _draw("exponential", (n_rows, n_cat), rows.dtype, dev, generator, "multinomial", 1.0)
        keys = (rows / e).where(rows > 0, -1.0)  # weight 0 last (0 / 0 would be NaN, which sorts first descending)
        idx = argsort(keys, -1, descending=True, stable=True)[:, :num_samples]
    out: Tensor = idx.reshape(*input._data.shape[:-1], num_samples)
    return out


async def multinomial_async(input: Tensor, num_samples: int, replacement: bool = False, *,
                            generator: Generator | None = None) -> Tensor:
    """``await multinomial_async(...)``: :func:`multinomial` as an awaitable (the device readback point)."""
    return multinomial(input, num_samples, replacement, generator=generator)


public("random", method=False)(multinomial_async)


def _poisson_kernel(a: Any, generator: Generator | None) -> Any:
    return _rng(generator).poisson(a.astype(np.float64)).astype(a.dtype)


# torch's PoissonBackward0 gives zeros; so does the tangent
_POISSON = Prim("poisson", _poisson_kernel, lambda g, n: (g * 0,), jvp=lambda ts, n: None if ts[0] is None else ts[0] * 0)


@public("random", method=False)
def poisson(input: Tensor, generator: Generator | None = None) -> Tensor:
    """Poisson counts with rates ``input`` (a floating tensor of non-negative rates), in its dtype."""
    if not input.dtype.is_floating_point:
        fail("method_dtype_not_supported_error", op="poisson", dtype=input.dtype.name, hint="")
    if _on_device(input.device) is not None:  # drawn by the device's generator, the rates checked there
        if generator is None:
            generator = _device_generator(to_device(input.device))
        elif to_device(generator.device).type != input.device.type:
            fail("device_error_requires", op="poisson", problem=f"expected a '{input.device.type}' device type for "
                 f"generator but found '{to_device(generator.device).type}'")
        return _POISSON(input, generator=generator)
    data = np.asarray(input.detach().cpu().numpy(), dtype=np.float64)
    if data.size and not np.all(data >= 0):
        fail("argument_error_invalid", op="poisson", problem="invalid Poisson rate, expected rate to be non-negative")
    return _POISSON(input, generator=generator)


@public("random", method=False)
def binomial(count: Tensor, prob: Tensor, generator: Generator | None = None) -> Tensor:
    """Draws from Binomial(count, prob) elementwise, in ``count``'s dtype. Not differentiable (torch's result
    claims ``requires_grad`` but has no derivative); a probability outside [0, 1] is clipped to it."""
    for name, t in (("count", count), ("prob", prob)):
        if t._data.dtype.kind not in "f":
            fail("argument_error_invalid_value", op="binomial", problem=f"binomial only supports floating-point "
                                                                        f"dtypes for {name}, got: {t.dtype.name}")
    if count.dtype != prob.dtype:
        fail("dtype_error_mismatch", op="binomial", what="count and prob", a=count.dtype.name, b=prob.dtype.name)
    from .._rules.broadcast import broadcast_shapes
    from ._common import check

    shape = check(broadcast_shapes, count._data.shape, prob._data.shape, op="binomial")
    n = np.maximum(np.floor(np.nan_to_num(count.detach().cpu().numpy().astype(np.float64))), 0).astype(np.int64)
    p = np.clip(np.nan_to_num(prob.detach().cpu().numpy().astype(np.float64)), 0.0, 1.0)
    arr = _rng(generator).binomial(np.broadcast_to(n, shape), np.broadcast_to(p, shape))
    return _on(np.asarray(arr).astype(count._data.dtype), count.device)
