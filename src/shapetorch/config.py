"""Global state and configuration (``torch.*`` module-level settings): default device, determinism,
threads, float32 matmul precision, warnings, autocast, and build information.

Settings that steer a GPU kernel choice in torch are kept and reported faithfully, but on the NumPy
backend they change nothing: NumPy's kernels are deterministic and always compute float32 in float32.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from . import _device
from ._autocast import AUTOCAST, autocast_dtype_for
from ._dtype import DType, bfloat16, to_dtype
from ._errors import fail
from .backends import thread_pool
from .ops._registry import public


class _Flags:
    deterministic = False
    deterministic_warn_only = False
    float32_matmul_precision = "highest"
    warn_always = False
    num_interop_threads = os.cpu_count() or 1


FLAGS = _Flags()


F = TypeVar("F", bound=Callable[..., Any])


def _config(fn: F) -> F:
    return public("config", method=False)(fn)


# -- defaults ---------------------------------------------------------------------------------------------

@_config
def set_default_device(device: Any) -> None:
    """Device that factory functions use when ``device=`` is omitted (``None`` restores "cpu")."""
    _device.DEFAULT[:] = [] if device is None else [_device.to_device(device)]


@_config
def get_default_device() -> _device.device:
    return _device.to_device(None)


@_config
def set_default_tensor_type(t: Any) -> None:
    """Deprecated in torch: sets the default floating dtype from a type name such as ``'torch.DoubleTensor'``."""
    from ._dtype import set_default_dtype

    name = t if isinstance(t, str) else getattr(t, "__name__", str(t))
    table = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16", "BFloat16Tensor": "bfloat16"}
    key = name.rsplit(".", 1)[-1]
    if key not in table:
        raise TypeError(f"invalid type: {t!r}")
    set_default_dtype(to_dtype(table[key]))


@_config
def get_device_module(device: Any = None) -> Any:
    """The backend module of a device type (``shapetorch.backends.numpy_backend`` for "cpu")."""
    d = _device.to_device(device)
    return _device.backend(d.type)


@_config
def is_cpu_only_mode() -> bool:
    """True when no device but "cpu" can run tensors here (no WebGPU adapter, or none registered)."""
    from .backends.webgpu.api import is_webgpu_available

    return not is_webgpu_available()


# -- determinism --------------------------------------------------------------------------------------

@_config
def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    FLAGS.deterministic, FLAGS.deterministic_warn_only = bool(mode), bool(warn_only)


@_config
def are_deterministic_algorithms_enabled() -> bool:
    return FLAGS.deterministic


@_config
def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return FLAGS.deterministic_warn_only


@_config
def set_deterministic_debug_mode(debug_mode: int | str) -> None:
    modes = {"default": 0, "warn": 1, "error": 2}
    mode = modes.get(debug_mode, debug_mode) if isinstance(debug_mode, str) else debug_mode
    if mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected one of 0, 1, 2 or default, warn, error, got {debug_mode!r}")
    use_deterministic_algorithms(mode != 0, warn_only=mode == 1)


@_config
def get_deterministic_debug_mode() -> int:
    if not FLAGS.deterministic:
        return 0
    return 1 if FLAGS.deterministic_warn_only else 2


# -- numerics, threads, warnings ------------------------------------------------------------------------

@_config
def set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        fail("argument_error_invalid", op="set_float32_matmul_precision",
             problem=f"precision must be 'highest', 'high' or 'medium', got {precision!r}")
    FLAGS.float32_matmul_precision = precision


@_config
def get_float32_matmul_precision() -> str:
    return FLAGS.float32_matmul_precision


@_config
def set_num_threads(n: int) -> None:
    """How many threads large CPU kernels (elementwise, reductions, softmax, layer norm, ...) split over."""
    if n <= 0:
        fail("argument_error_invalid", op="set_num_threads", problem=f"number of threads must be positive, got {n}")
    thread_pool.set_num_threads(int(n))


@_config
def get_num_threads() -> int:
    """The threads large CPU kernels split over (``backends.thread_pool``): ``OMP_NUM_THREADS``, else the physical
    cores, until ``set_num_threads``; BLAS keeps its own (``OPENBLAS_NUM_THREADS``)."""
    return thread_pool.num_threads()


@_config
def set_num_interop_threads(n: int) -> None:
    if n <= 0:
        fail("argument_error_invalid", op="set_num_interop_threads", problem=f"number of threads must be positive, got {n}")
    FLAGS.num_interop_threads = n


@_config
def get_num_interop_threads() -> int:
    return FLAGS.num_interop_threads


@_config
def set_warn_always(b: bool) -> None:
    FLAGS.warn_always = bool(b)


@_config
def is_warn_always_enabled() -> bool:
    return FLAGS.warn_always


# -- build information ---------------------------------------------------------------------------------

@_config
def compiled_with_cxx11_abi() -> bool:
    """torch reports how libtorch was built; shapetorch has no C++ part, so there is no ABI to report."""
    return False


@_config
def get_file_path(*path_components: str) -> str:
    """A path inside the installed shapetorch package."""
    from pathlib import Path  # imported here: pathlib (with urllib.parse) is several ms of the first op's import

    return str(Path(__file__).parent.joinpath(*path_components))


@_config
def profiler_allow_cudagraph_cupti_lazy_reinit_cuda12() -> bool:
    """A CUDA 12 profiler switch in torch; there is no CUDA here, so it is always False."""
    return False


# -- autocast ------------------------------------------------------------------------------------------

class autocast:
    """Mixed precision inside the region (``torch.autocast``), with torch's CPU op policy
    (``_autocast.LOWER_PRECISION`` and ``FLOAT32``).

    ``with st.autocast("cpu"):`` runs the matmul family, linear, the convolutions, prelu and attention with
    their floating inputs cast to bfloat16 (the CPU default; ``dtype=`` chooses), and the losses, prod,
    cdist and the solvers with bfloat16 inputs in float32, as torch's CPU autocast does.
    """

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True, cache_enabled: bool | None = None):
        self.device_type = device_type
        self.fast_dtype = to_dtype(dtype) if dtype is not None else AUTOCAST.dtype.get(device_type, bfloat16)
        self._enabled = enabled
        self._cache = cache_enabled

    def __enter__(self) -> autocast:
        self._prev = (AUTOCAST.enabled.get(self.device_type, False), AUTOCAST.dtype.get(self.device_type),
                      AUTOCAST.cache_enabled)
        AUTOCAST.enabled[self.device_type] = self._enabled
        AUTOCAST.dtype[self.device_type] = self.fast_dtype
        if self._cache is not None:
            AUTOCAST.cache_enabled = self._cache
        autocast_increment_nesting()
        return self

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        enabled, dtype, cache = self._prev
        if enabled:
            AUTOCAST.enabled[self.device_type] = True
        else:  # an empty table keeps matmul's autocast check to one falsy test
            AUTOCAST.enabled.pop(self.device_type, None)
        if dtype is not None:
            AUTOCAST.dtype[self.device_type] = dtype
        AUTOCAST.cache_enabled = cache


public("config", method=False)(autocast)


@_config
def is_autocast_enabled(device_type: str = "cuda") -> bool:
    return AUTOCAST.enabled.get(device_type, False)


@_config
def get_autocast_dtype(device_type: str) -> type[DType]:
    return AUTOCAST.dtype.get(device_type, bfloat16)


@_config
def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    AUTOCAST.dtype[device_type] = to_dtype(dtype)


@_config
def is_autocast_cpu_enabled() -> bool:
    return is_autocast_enabled("cpu")


@_config
def is_autocast_ipu_enabled() -> bool:
    return is_autocast_enabled("ipu")


@_config
def is_autocast_xla_enabled() -> bool:
    return is_autocast_enabled("xla")


@_config
def get_autocast_cpu_dtype() -> type[DType]:
    return get_autocast_dtype("cpu")


@_config
def get_autocast_gpu_dtype() -> type[DType]:
    return get_autocast_dtype("webgpu")


@_config
def get_autocast_ipu_dtype() -> type[DType]:
    return get_autocast_dtype("ipu")


@_config
def get_autocast_xla_dtype() -> type[DType]:
    return get_autocast_dtype("xla")


@_config
def is_autocast_cache_enabled() -> bool:
    return AUTOCAST.cache_enabled


@_config
def set_autocast_cache_enabled(enabled: bool) -> None:
    AUTOCAST.cache_enabled = bool(enabled)


@_config
def clear_autocast_cache() -> None:
    """shapetorch keeps no cache of cast weights (casts are cheap on NumPy); nothing to drop."""


@_config
def autocast_increment_nesting() -> int:
    AUTOCAST.nesting += 1
    return AUTOCAST.nesting


@_config
def autocast_decrement_nesting() -> int:
    AUTOCAST.nesting -= 1
    return AUTOCAST.nesting


__all__ = ["AUTOCAST", "FLAGS", "autocast", "autocast_dtype_for"]
