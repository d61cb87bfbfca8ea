"""The in-place samplers' ranges against torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import shapetorch as st

_CASES = [(d, a) for d in ("float32", "float16", "int64", "int32", "uint8") for a in ((), (9,), (3, 5), (2, None))]


@pytest.mark.parametrize("dtype,args", [*_CASES, ("bool", ()), ("bool", (2,))])
def test_random_bounds_as_torch(dtype: str, args: tuple[Any, ...]) -> None:
    """``random_()``, ``random_(to)`` and ``random_(from, to)`` draw from torch's ranges (``random_(9)`` once drew
    from [9, 2^24): a silent wrong answer)."""
    ranges = []
    for lib in (torch, st):
        t = lib.zeros(40000, dtype=getattr(lib, dtype)).random_(*args)
        ranges.append((float(t.min()), float(t.max())))
    (tlo, thi), (slo, shi) = ranges
    assert slo >= min(tlo, 0 if not args else args[0] if len(args) == 2 else 0)
    if args and (len(args) == 1 or args[1] is not None):  # a small range: both hit its ends
        assert (slo, shi) == (tlo, thi)
    else:  # the whole range: the same order of magnitude at the top
        assert thi / 4 <= shi <= thi * 4 + 1
