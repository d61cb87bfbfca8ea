"""``shapetorch.testing``: ``assert_close`` with torch's tolerances by dtype and its failure message, the
deprecated ``assert_allclose``, and ``make_tensor``."""

from __future__ import annotations

from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_allclose", "assert_close", "make_tensor"]
