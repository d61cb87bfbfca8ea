"""``shapetorch.return_types``: the classes of the named tuples ops return, by torch's names
(``return_types.max``, ``return_types.sort``, ``return_types.linalg_svd``, ...)."""

from typing import Any

from .ops import return_types as _rt

_CLASSES: dict[str, Any] = {name: cls for name, cls in vars(_rt).items()
                            if isinstance(cls, type) and cls.__module__ == "shapetorch.return_types"}
globals().update(_CLASSES)
__all__ = sorted(_CLASSES)  # noqa: PLE0605
