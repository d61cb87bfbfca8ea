"""Run a plain PyTorch program twice, with torch and with shapetorch in its place, and compare what it prints.

A program is a script written for torch (``import torch``, ``from torch import nn``, ...) that prints its
losses and outputs as a user would. ``run(source, "shapetorch")`` executes the same source with every
``torch`` import answered by shapetorch; nothing in the program changes.

Identical weights and data, without touching the program:

- **Random draws the program makes** (``torch.randn``, ``torch.randint``, ``torch.rand``, ...,
  ``torch.manual_seed``) come from one NumPy stream in both runs, and so do the draws the libraries make
  for the program where a user sees them: the shuffling of a ``DataLoader`` (``RandomSampler``,
  ``SubsetRandomSampler``), dropout masks.
- **Initial weights** differ between libraries (each has its own generator), so the torch run records
  each top-level module's ``state_dict`` when it is first called, and the shapetorch run loads the
  recorded values into the same module at the same moment. Later weights are the program's own doing.

Printed numbers are compared with a tolerance (float32 arithmetic in a different order), the rest of the
text exactly (``shapetorch`` is read as ``torch``).
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


class _Shared:
    """The one random stream both runs draw from, and the initial weights the torch run recorded."""

    def __init__(self) -> None:
        self.rng = np.random.default_rng(0)
        self.weights: list[dict[str, np.ndarray]] = []

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(int(seed))


def _patches(lib: Any, shared: _Shared, record: bool) -> list[tuple[Any, str, Any]]:
    """(owner, name, replacement) for every random source and the module call of ``lib``."""
    nn, F = lib.nn, lib.nn.functional

    def placed(t: Any) -> Any:
        # a draw lands where the library's own factory would put it: the default device (webgpu in a webgpu run)
        return t.to(lib.get_default_device())

    def floats(arr: np.ndarray, dtype: Any = None, device: Any = None, requires_grad: bool = False, **_: Any) -> Any:
        t = placed(lib.from_numpy(np.ascontiguousarray(arr, dtype=np.float32)))
        t = t.to(dtype) if dtype is not None else t
        t = t.to(device) if device is not None else t
        return t.requires_grad_(requires_grad) if requires_grad else t

    def sizes(size: Any) -> tuple[int, ...]:
        if len(size) == 1 and isinstance(size[0], (tuple, list, lib.Size)):
            size = tuple(size[0])
        return tuple(int(s) for s in size)

    def randn(*size: Any, generator: Any = None, **kw: Any) -> Any:
        return floats(shared.rng.standard_normal(sizes(size)), **kw)

    def rand(*size: Any, generator: Any = None, **kw: Any) -> Any:
        return floats(shared.rng.random(sizes(size)), **kw)

    def randint(*args: Any, generator: Any = None, dtype: Any = None, device: Any = None, **kw: Any) -> Any:
        if "size" in kw:
            args = (*args, kw.pop("size"))
        low, high, size = (0, *args) if len(args) == 2 else args
        out = placed(lib.from_numpy(shared.rng.integers(int(low), int(high), tuple(size)).astype(np.int64)))
        out = out.to(device) if device is not None else out
        return out.to(dtype) if dtype is not None else out

    def randperm(n: int, generator: Any = None, dtype: Any = None, **kw: Any) -> Any:
        out = placed(lib.from_numpy(shared.rng.permutation(int(n)).astype(np.int64)))
        return out.to(dtype) if dtype is not None else out

    def like(fn: Any) -> Any:
        return lambda x, dtype=None, **kw: fn(*x.shape, dtype=dtype or x.dtype, **kw)

    def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, **kw: Any) -> Any:
        shape = tuple(size) if size is not None else tuple(getattr(mean, "shape", getattr(std, "shape", ())))
        return mean + std * floats(shared.rng.standard_normal(shape))

    def multinomial(probs: Any, num_samples: int, replacement: bool = False, generator: Any = None) -> Any:
        p = probs.detach().cpu().double().numpy()
        p = p / p.sum(-1, keepdims=True)
        rows = p.reshape(-1, p.shape[-1])
        out = np.stack([shared.rng.choice(len(r), num_samples, replace=replacement, p=r) for r in rows])
        return lib.from_numpy(out.reshape((*p.shape[:-1], num_samples)).astype(np.int64)).to(probs.device)

    def bernoulli(input: Any, p: Any = None, generator: Any = None) -> Any:
        probs = input.detach().cpu().double().numpy() if p is None else np.full(tuple(input.shape), float(p))
        return lib.from_numpy((shared.rng.random(probs.shape) < probs).astype(np.float32)).to(input.device, input.dtype)

    def dropout(input: Any, p: float = 0.5, training: bool = True, inplace: bool = False) -> Any:
        if not training or p == 0:
            return input
        keep = floats(shared.rng.random(tuple(input.shape)) >= p).to(input.device, input.dtype)
        return input * keep / (1 - p)

    def manual_seed(seed: int) -> Any:
        shared.seed(seed)
        return original_seed(seed)

    original_seed = lib.manual_seed
    original_call = nn.Module.__call__
    depth = [0]

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if depth[0] == 0 and not getattr(self, "_harness_seen", False):
            # its submodules hold the weights just recorded/loaded: a later call of one alone (a checkpoint's
            # recomputation during backward) must not load them again
            for m in self.modules():
                object.__setattr__(m, "_harness_seen", True)
            if record:
                shared.weights.append({k: v.detach().cpu().numpy().copy() for k, v in self.state_dict().items()})
            else:
                values = shared.weights.pop(0)
                self.load_state_dict({k: lib.from_numpy(v.copy()) for k, v in values.items()})
        depth[0] += 1
        try:
            return original_call(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    def sampler_iter(self: Any) -> Iterator[int]:
        n = len(self.data_source)
        yield from shared.rng.permutation(n).tolist()

    def subset_sampler_iter(self: Any) -> Iterator[int]:
        for i in shared.rng.permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def standard_normal(shape: Any, dtype: Any = None, device: Any = None) -> Any:
        return floats(shared.rng.standard_normal(tuple(int(s) for s in shape)), dtype=dtype, device=device)

    # the library's own modules that draw for the program (torch's Categorical calls torch.multinomial)
    # (and torch's Normal.sample calls torch.normal); a reparameterized draw (rsample of Normal,
    # MultivariateNormal, LowRankMultivariateNormal, StudentT) is torch's _standard_normal, shapetorch's
    # ops.random.randn (which nothing else in shapetorch calls through the module)
    if lib.__name__ == "shapetorch":
        rand_ops = importlib.import_module(f"{lib.__name__}.ops.random")
        internal = [(rand_ops, "multinomial", multinomial), (rand_ops, "normal", normal), (rand_ops, "randn", randn)]
    else:
        internal = [(importlib.import_module(f"torch.distributions.{m}"), "_standard_normal", standard_normal)
                    for m in ("normal", "multivariate_normal", "lowrank_multivariate_normal", "studentT")]
    return [*internal,
        (lib, "randn", randn), (lib, "rand", rand), (lib, "randint", randint), (lib, "randperm", randperm),
        (lib, "randn_like", like(randn)), (lib, "rand_like", like(rand)), (lib, "normal", normal),
        (lib, "multinomial", multinomial), (lib, "bernoulli", bernoulli), (lib, "manual_seed", manual_seed),
        (F, "dropout", dropout), (nn.Module, "__call__", call),
        (importlib.import_module(f"{lib.__name__}.utils.data").RandomSampler, "__iter__", sampler_iter),
        (importlib.import_module(f"{lib.__name__}.utils.data").SubsetRandomSampler, "__iter__", subset_sampler_iter),
        # random_split draws through the randperm its module imported
        (importlib.import_module(f"{lib.__name__}.utils.data.dataset"), "randperm", randperm),
    ]


@contextlib.contextmanager
def _patched(patches: list[tuple[Any, str, Any]]) -> Iterator[None]:
    saved = [(owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(owner, name))
             for owner, name, _ in patches]
    try:
        for owner, name, value in patches:
            setattr(owner, name, value)
        yield
    finally:
        for owner, name, value in saved:
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


_MISSING = object()


def _importer(lib_name: str) -> Any:
    """``__import__`` that answers ``torch`` and ``torch.*`` with ``lib_name`` and its submodules."""
    real = builtins.__import__

    def imp(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level == 0 and (name == "torch" or name.startswith("torch.")):
            target = lib_name + name[len("torch"):]
            module = importlib.import_module(target)
            return module if fromlist else importlib.import_module(lib_name)
        return real(name, globals, locals, fromlist, level)

    return imp


def run(source: str, lib_name: str, shared: _Shared, filename: str = "<program>", device: str | None = None) -> str:
    """Execute ``source`` with ``torch`` meaning ``lib_name``; what it printed. ``device``: the default device
    during the run (``set_default_device``), so every tensor the program makes without a device lands there."""
    lib = importlib.import_module(lib_name)
    env_builtins = dict(vars(builtins), __import__=_importer(lib_name))
    out = io.StringIO()
    before, dtype = lib.get_default_device(), lib.get_default_dtype()
    if device is not None:
        lib.set_default_device(device)
    # the library's own generator draws what the program does not see (a module's initial weights, which the
    # torch run records): unseeded, those weights were whatever earlier tests had left, so a program that never
    # calls manual_seed trained from different weights in each test order (gaussian_regression did)
    lib.manual_seed(0)
    try:
        with _patched(_patches(lib, shared, record=lib_name == "torch")), contextlib.redirect_stdout(out):
            exec(compile(source, filename, "exec"), {"__name__": "__main__", "__builtins__": env_builtins})
    finally:  # what the program set for itself (gaussian_regression: float64) stays with it
        lib.set_default_device(before)
        lib.set_default_dtype(dtype)
    return out.getvalue().replace("shapetorch", "torch")


def run_both(source: str, filename: str, device: str | None = None) -> tuple[str, str]:
    """The program's output with torch (on the CPU) and with shapetorch (on ``device``, the CPU by default)."""
    shared = _Shared()
    theirs = run(source, "torch", shared, filename)
    shared.seed(0)
    ours = run(source, "shapetorch", shared, filename, device)
    return theirs, ours


def compare(theirs: str, ours: str, rtol: float = 2e-4, atol: float = 2e-5) -> None:
    """Same text; numbers within tolerance (printed digits are rounded, so one unit of the last digit)."""
    t_lines, o_lines = theirs.splitlines(), ours.splitlines()
    assert len(t_lines) == len(o_lines), f"torch printed {len(t_lines)} lines, shapetorch {len(o_lines)}:\n{ours}"
    for t, o in zip(t_lines, o_lines):
        assert _NUMBER.sub("#", t) == _NUMBER.sub("#", o), f"\ntorch:      {t}\nshapetorch: {o}"
        for a, b in zip(_NUMBER.findall(t), _NUMBER.findall(o)):
            if a == b:
                continue
            unit = 10.0 ** -len(a.split(".")[1]) if "." in a and "e" not in a.lower() else 0.0
            fa, fb = float(a), float(b)
            assert abs(fa - fb) <= atol + rtol * abs(fa) + unit, f"\ntorch:      {t}\nshapetorch: {o}"
