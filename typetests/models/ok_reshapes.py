"""Reshapes with -1, negative dims, flatten and unflatten, movedim."""
from __future__ import annotations

from typing import Literal as L

import shapetorch as st
from shapetorch import Tensor, float32


def regroup(x: Tensor[tuple[L[2], L[6], L[4]], float32]) -> Tensor[tuple[L[2], L[4], L[3], L[2]], float32]:
    y = x.reshape(2, -1)
    z = y.view(2, 3, -1).flatten(-2, -1)
    w = z.unflatten(-1, (6, 4)).movedim(-1, 1)
    return w.reshape(2, 4, 3, 2)


def main() -> None:
    regroup(st.randn(2, 6, 4))


if __name__ == "__main__":
    main()
