"""int64 on WebGPU is stored as int32; these checks make every int64 result exact or refused, never wrapped.

Elementwise ops check their own results in the kernel (``codegen.I32_OVERFLOW``: add, sub, mul, neg, abs,
pow, floor division, lcm; ``kernels.cast``: a float outside int32 cast to int64; the left shift in
``special_kernels``). Sums, products, their scans and integer matmul accumulate in i32 inside their shaders, and
``scatter_add``, ``index_add`` and ``index_put(accumulate=True)`` with 32-bit atomic adds, so they get a float32
*shadow*: the same op on the input cast to float32, compared with the int32 result. A wrap
moves the result by a multiple of 2^32, while the shadow's rounding error stays far below 2^31 (for a sum,
n · max|x| · 2^-24, so up to 2^24 terms per output element with any int32 values), so ``|shadow - result| >=
2^31`` holds exactly when the result wrapped. Such an element records the int64 DTypeError
(``method_dtype_not_supported_error``, "with a result outside int32"), raised at the next sync as the other
device-side checks; the op's values are lost, the runtime goes on.

A shadow costs a cast, the float op and one comparison (3 dispatches, more for a chunked reduction) per int64
sum, product, scan, matmul or accumulating index op; float, int32 and bool ops are untouched. The float32 shadow
of an atomic accumulation adds in whatever order the threads run, which moves its rounding, not its bound.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..._engine.primitives import PRIMS
from . import kernels as K
from .runtime import WArray

CHECKED = ("sum", "prod", "cumsum", "cumprod", "matmul", "matmul_bias", "scatter_add", "index_add", "index_backward")
# The positional arguments that hold the values (cast to float32 for the shadow); the others are indices. The
# accumulating index ops add with 32-bit atomics (``index_backward`` is ``index_put(accumulate=True)``'s scatter).
VALUES = {"scatter_add": (0, 2), "index_add": (0, 1), "index_backward": (0,)}
_F32 = np.dtype(np.float32)


def _shadow(name: str) -> Callable[..., None]:
    """The check of primitive ``name``'s int64 result ``out``, called by its kernel's wrapper (``kernels._named``, as
    ``shadow(run, out, args, params)``, with the runtime's op already ``name``) only when ``out`` is a non-empty int64
    array: the float32 ops cost nothing per call for it."""
    values = VALUES.get(name)

    def check(run: Callable[..., Any], out: WArray, args: tuple[Any, ...], params: dict[str, Any]) -> None:
        wide = [K.cast(a, _F32) if type(a) is WArray and (values is None or i in values) else a
                for i, a in enumerate(args)]
        shadow = run(*wide, **params)
        # a throwaway bool output: the comparison's only effect is the check it records
        K.elementwise("0u", np.dtype(bool), [("a", shadow, _F32), ("b", out, out.dtype)], out.shape,
                      check="abs(a - f32(b)) >= 2147483648.0")

    return check


def install() -> None:
    """Give the WebGPU kernels of :data:`CHECKED` their shadow check (after :func:`.kernels.register` and
    ``complex_kernels.install``): inside the kernel's own wrapper, so an unchecked call costs no frame for it."""
    for name in CHECKED:
        prim = PRIMS.get(name)
        if prim is not None and "webgpu" in prim.kernels:
            prim.kernels["webgpu"] = K.rewrap(prim.kernels["webgpu"], shadow=_shadow(name))
