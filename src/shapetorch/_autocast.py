"""Autocast state and policy; kept apart so ops can import it cheaply (``shapetorch.config`` holds the public
switches).

The policy is torch's for the CPU (used for every device): the ops in ``LOWER_PRECISION`` run their
floating inputs in the autocast dtype, those in ``FLOAT32`` run lower-precision inputs in float32, and
float64 inputs are never cast. An op casts at its entry (``ops._common.autocast_inputs``); composites of
listed ops follow from their parts, as torch's do."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from ._dtype import DType, bfloat16, float16, float32


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.enabled: dict[str, bool] = {}
        self.dtype: dict[str, type[DType]] = {"cpu": bfloat16, "webgpu": float16, "cuda": float16, "xla": bfloat16,
                                               "ipu": float16}
        self.cache_enabled = True
        self.nesting = 0


AUTOCAST = _AutocastState()


def autocast_dtype_for(device_type: str) -> type[DType] | None:
    """The dtype matmul-family ops cast to on ``device_type`` right now, or None outside autocast."""
    return AUTOCAST.dtype[device_type] if AUTOCAST.enabled.get(device_type) else None




# torch's CPU lists (aten's autocast_mode), by the names of shapetorch's entry points.
LOWER_PRECISION = frozenset({
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "bmm", "mm",
    "matmul", "linalg_vecdot", "baddbmm", "addmm", "addbmm", "linear", "prelu", "scaled_dot_product_attention",
})
FLOAT32 = frozenset({
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
    "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "margin_ranking_loss", "hinge_embedding_loss",
    "cosine_embedding_loss", "poisson_nll_loss", "triplet_margin_loss", "multi_margin_loss", "multilabel_margin_loss",
    "prod", "quantile", "nanquantile", "cdist", "trace", "pinverse", "cholesky", "inverse", "linalg_inv",
    "linalg_cholesky", "linalg_solve", "linalg_svdvals", "linalg_eigvalsh", "linalg_matrix_rank", "linalg_cond",
    "reflection_pad", "avg_pool3d", "max_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d", "max_unpool2d",
    "max_unpool3d",
})


def autocast_target(op: str, device_type: str) -> type[DType] | None:
    """The dtype ``op``'s floating inputs run in under autocast on ``device_type`` now, or None."""
    fast = autocast_dtype_for(device_type)
    if fast is None:
        return None
    if op in LOWER_PRECISION:
        return fast
    return float32 if op in FLOAT32 else None


@contextlib.contextmanager
def autocast_suspended() -> Iterator[None]:
    """No autocast inside: an op built of listed ones that torch runs as one unlisted kernel (``bilinear``)."""
    saved = dict(AUTOCAST.enabled)
    AUTOCAST.enabled.clear()
    try:
        yield
    finally:
        AUTOCAST.enabled.update(saved)
