"""Detection box utilities: cxcywh to xyxy by unbind/stack, pairwise IoU by broadcasting max/min, greedy NMS."""
from __future__ import annotations

from typing import Any, Literal as L, TypeVar

import shapetorch as st
from shapetorch import Tensor, float32, int64

M = TypeVar("M")
K = TypeVar("K")


def box_cxcywh_to_xyxy(b: Tensor[tuple[M, L[4]], float32]) -> Tensor[tuple[M, L[4]], float32]:
    cx, cy, w, h = b.unbind(-1)
    return st.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def box_area(b: Tensor[tuple[M, L[4]], float32]) -> Tensor[tuple[M], float32]:
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def box_iou(a: Tensor[tuple[M, L[4]], float32], b: Tensor[tuple[K, L[4]], float32]) -> Tensor[tuple[M, K], float32]:
    lt = st.max(a[:, None, :2], b[None, :, :2])
    rb = st.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return inter / union


def nms(boxes: Tensor[tuple[M, L[4]], float32], scores: Tensor[tuple[M], float32],
        threshold: float) -> Tensor[tuple[int], int64]:
    order = scores.argsort(descending=True)
    keep: list[int] = []
    while order.numel() > 0:
        i = int(order[0].item())
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0]
        order = order[1:][ious <= threshold]
    return st.tensor(keep, dtype=st.long)


def main() -> None:
    boxes = box_cxcywh_to_xyxy(st.cat([st.rand(20, 2) * 10, st.rand(20, 2) * 3 + 1], dim=1))
    anchors = box_cxcywh_to_xyxy(st.cat([st.rand(32, 2) * 10, st.full((32, 2), 2.0)], 1))
    keep = nms(boxes, st.rand(20), 0.3)
    gt = boxes[keep]
    best, idx = box_iou(anchors, gt).max(dim=1)
    chosen: Tensor[tuple[Any, L[4]], float32] = gt[idx]
    offsets = chosen - anchors
    best.mean() + offsets.abs().sum()


if __name__ == "__main__":
    main()
