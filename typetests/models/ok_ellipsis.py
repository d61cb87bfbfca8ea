"""Ellipsis and None indexing on batched boxes."""
from __future__ import annotations

from typing import Any, Literal as L

import shapetorch as st
from shapetorch import Tensor, float32


def areas(boxes: Tensor[tuple[Any, L[7], L[4]], float32]) -> Tensor[tuple[Any, L[7], L[7]], float32]:
    w = boxes[..., 2] - boxes[..., 0]
    h = boxes[..., 3] - boxes[..., 1]
    area = w * h
    return area[..., :, None] + area[..., None, :]


def main() -> None:
    areas(st.rand(5, 7, 4))


if __name__ == "__main__":
    main()
