"""``shapetorch.autograd.anomaly_mode``: detect_anomaly and set_detect_anomaly.

The switch lives in the engine (``shapetorch._engine.anomaly``), which reads it on every backward;
this is its public module, as ``torch.autograd.anomaly_mode``.
"""

from .._engine.anomaly import (
           detect_anomaly,
           is_anomaly_check_nan_enabled,
           is_anomaly_enabled,
           set_anomaly_enabled,
           set_detect_anomaly,
)

__all__ = ["detect_anomaly", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "set_anomaly_enabled",
           "set_detect_anomaly"]
