"""Every public function torch also has, run on the WebGPU device with torch's own OpInfo samples, against the
same call on the CPU (which the bad-input fuzzer holds to torch).

A sample either gives the CPU's answer on the device (same shape, dtype and values within float32 tolerance),
or is refused with a code that names a device limit (no kernel, a dtype the device does not store, a size past
its limits). Anything else is a bug in a device path: a refused argument that the CPU took (an op handing a
device array to NumPy ends up there), a raw Python error, or a different answer.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import _bad_input as fuzz
import shapetorch as st

DEV = "webgpu"

# codes that say the device cannot do it (documented in docs/runtimes.md), not that it did it wrong
DEVICE_LIMITS = frozenset({"kernel_not_registered_error", "method_dtype_not_supported_error", "device_error_limit",
                           "dtype_error_device"})

# results defined only up to a sign per column (eigenvectors, singular vectors): compared by magnitude
SIGNED_COLUMNS = frozenset({"linalg.eigh", "linalg.eig", "linalg.svd", "svd", "linalg.svdvals", "pca_lowrank",
                            "svd_lowrank"})

# random results besides the fuzzer's (their draws differ between devices): shape and dtype only
RANDOM = frozenset({*fuzz.UNSEEDED, "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d"})


@dataclass
class Outcome:
    name: str
    verdict: str  # "ok", "limit" (refused with a device-limit code), "argument", "raw", "differs"
    detail: str = ""


def _on(v: Any, dev: str) -> Any:
    if isinstance(v, torch.Tensor):
        return st.tensor(v.detach().numpy().copy()).to(dev)
    if isinstance(v, (list, tuple)) and not isinstance(v, torch.Size):
        return type(v)(_on(a, dev) for a in v)
    if isinstance(v, dict):
        return {k: _on(a, dev) for k, a in v.items()}
    if isinstance(v, torch.dtype):
        return getattr(st, str(v).removeprefix("torch."))
    return v


def _leaves(r: Any) -> list[Any]:
    if isinstance(r, (list, tuple)):
        return [x for a in r for x in _leaves(a)]
    return [r]


ORDINARY = 4  # samples with elements per op: enough to reach the shapes and arguments that take other paths


def samples(name: str) -> Iterator[Any]:
    """torch's float32 samples of ``name``: the first few ordinary ones and the first degenerate one (0-d or
    empty), where device paths most often take a shortcut of their own."""
    op = fuzz._opinfos()[name]
    if torch.float32 not in op.supported_dtypes("cpu"):
        return
    ordinary, degenerate = 0, False
    for s in op.sample_inputs("cpu", torch.float32, requires_grad=False):
        if not isinstance(s.input, torch.Tensor):
            continue
        if s.input.dim() == 0 or s.input.numel() == 0:
            if not degenerate:
                degenerate = True
                yield s
        elif ordinary < ORDINARY:
            ordinary += 1
            yield s
        if ordinary == ORDINARY and degenerate:
            return


def _random(name: str, s: Any) -> bool:
    """Whether the sample draws random numbers (its values then differ between devices by design)."""
    if name == "nn.functional.multi_head_attention_forward":  # its dropout_p is the 10th positional argument
        return bool(s.kwargs.get("training", True) and len(s.args) > 9 and s.args[9])
    return name in RANDOM or (name == "nn.functional.scaled_dot_product_attention" and s.kwargs.get("dropout_p", 0))


def _compare(name: str, s: Any, ref: Any, out: Any) -> str:
    """What differs between the CPU's result and the device's ("" when nothing)."""
    a, b = _leaves(ref), _leaves(out)
    if len(a) != len(b):
        return f"{len(a)} results on the CPU, {len(b)} on the device"
    for x, y in zip(a, b):
        if not isinstance(x, st.Tensor):
            if isinstance(y, st.Tensor) or (x != y and not (isinstance(x, float) and np.isnan(x) and np.isnan(y))):
                return f"{x!r} on the CPU, {y!r} on the device"
            continue
        if not isinstance(y, st.Tensor) or tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
            return f"{x.dtype}{tuple(x.shape)} on the CPU, {getattr(y, 'dtype', type(y))}{tuple(getattr(y, 'shape', ()))}"
        if y.device.type != DEV and "device" not in s.kwargs:  # (``ones_like(x, device="cpu")`` is on the CPU)
            return f"the result is on {y.device}"
        if _random(name, s):
            continue
        xa, ya = x.detach().cpu().numpy(), y.detach().cpu().numpy()
        if name in SIGNED_COLUMNS:
            xa, ya = np.abs(xa), np.abs(ya)
        if xa.dtype.kind in "fc":
            if not np.allclose(xa, ya, rtol=1e-3, atol=1e-4, equal_nan=True):
                return f"values differ by up to {np.nanmax(np.abs(xa - ya)):.3g}"
        elif not np.array_equal(xa, ya):
            return "integer values differ"
    return ""


def judge(name: str) -> Outcome:
    """The worst outcome over ``name``'s samples (the CPU's refusals are the fuzzer's business, not ours)."""
    fn = fuzz._public(st, name)
    worst = Outcome(name, "ok")
    for s in samples(name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = fn(_on(s.input, "cpu"), *_on(tuple(s.args), "cpu"), **_on(dict(s.kwargs), "cpu"))
            except Exception:  # noqa: BLE001  (refused on the CPU too: not a device matter)
                continue
            try:
                out = fn(_on(s.input, DEV), *_on(tuple(s.args), DEV), **_on(dict(s.kwargs), DEV))
                for t in _leaves(out):  # a device error flag is raised at the next sync: read each result back
                    if isinstance(t, st.Tensor):
                        t.cpu()
                detail = _compare(name, s, ref, out)
                now = Outcome(name, "differs", detail) if detail else Outcome(name, "ok")
            except st.ShapetorchError as e:
                code = getattr(e, "code", "")
                verdict = "limit" if code in DEVICE_LIMITS else "argument" if code.startswith("argument_") else "coded"
                now = Outcome(name, verdict, f"{code}: {str(e)[:160]}")
            except Exception as e:  # noqa: BLE001  (what is judged)
                now = Outcome(name, "raw", f"{type(e).__name__}: {str(e)[:160]}")
        if now.verdict != "ok" and worst.verdict in ("ok", "limit"):
            worst = now
    return worst


def run() -> list[Outcome]:
    return [judge(name) for name in fuzz.names()]


if __name__ == "__main__":
    import json
    import sys
    from pathlib import Path

    results = run()
    bad = {o.name: o.verdict for o in results if o.verdict not in ("ok", "limit")}
    for o in results:
        if o.verdict != "ok":
            print(f"{o.name:45} {o.verdict:8} {o.detail}")
    print(f"{sum(o.verdict == 'ok' for o in results)} ok, {sum(o.verdict == 'limit' for o in results)} at a device "
          f"limit, {len(bad)} failing, of {len(results)}")
    if "--write-baseline" in sys.argv:
        (Path(__file__).parent / "webgpu_registry_baseline.json").write_text(json.dumps(bad, indent=1, sort_keys=True)
                                                                             + "\n")
