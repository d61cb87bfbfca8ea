"""``shapetorch.testing``: ``assert_close`` with torch's tolerances by dtype and its failure message."""

from __future__ import annotations

from ._comparison import assert_close

__all__ = ["assert_close"]
