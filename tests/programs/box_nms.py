# Object-detection box utilities without torchvision: xywh<->xyxy conversion, pairwise IoU by
# broadcasting torch.max/torch.min, greedy NMS with sort and a Python loop, per-class batched NMS with the
# coordinate-offset trick, and matching anchors to ground truth for a tiny box-regression training loop.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def box_cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def box_area(b):
    return (b[:, 2] - b[:, 0]).clamp(min=0) * (b[:, 3] - b[:, 1]).clamp(min=0)


def box_iou(a, b):
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return inter / union


def nms(boxes, scores, iou_threshold):
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0].item()
        keep.append(i)
        if order.numel() == 1:
            break
        ious = box_iou(boxes[i].unsqueeze(0), boxes[order[1:]])[0]
        order = order[1:][ious <= iou_threshold]
    return torch.tensor(keep, dtype=torch.long)


def batched_nms(boxes, scores, labels, iou_threshold):
    offsets = labels.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores, iou_threshold)


centers = torch.rand(20, 2) * 10
sizes = torch.rand(20, 2) * 3 + 1
boxes = box_cxcywh_to_xyxy(torch.cat([centers, sizes], dim=1))
scores = torch.rand(20)
labels = torch.randint(0, 3, (20,))
iou = box_iou(boxes, boxes)
print(f"iou diag all ones: {torch.allclose(iou.diagonal(), torch.ones(20))}")
print(f"iou mean off-diagonal {(iou.sum() - iou.trace()).item() / 380:.4f}")
keep = nms(boxes, scores, 0.3)
print("nms keep", keep.tolist())
keep_c = batched_nms(boxes, scores, labels, 0.3)
print("batched keep", sorted(keep_c.tolist()))
top_scores, top_idx = scores[keep].sort(descending=True)
print("top kept", [f"{s:.3f}" for s in top_scores[:5].tolist()])

# anchors matched to targets by max IoU, then learn offsets
anchors = box_cxcywh_to_xyxy(torch.cat([torch.rand(32, 2) * 10, torch.full((32, 2), 2.0)], 1))
gt = boxes[keep]
match_iou, match_idx = box_iou(anchors, gt).max(dim=1)
pos = match_iou > 0.1
print(f"positives {pos.sum().item()} of {len(anchors)}")
feats = torch.cat([anchors, anchors[:, 2:] - anchors[:, :2]], dim=1)
head = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(head.parameters(), lr=0.01, momentum=0.9)
target = gt[match_idx] - anchors
for epoch in range(40):
    pred = head(feats / 10)
    loss = F.smooth_l1_loss(pred[pos], target[pos], beta=1.0)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if epoch % 10 == 0:
        print(f"epoch {epoch} loss {loss.item():.4f}")
with torch.no_grad():
    refined = anchors + head(feats / 10)
    new_iou = box_iou(refined, gt).gather(1, match_idx[:, None]).squeeze(1)
print(f"mean IoU before {match_iou[pos].mean():.4f} after {new_iou[pos].mean():.4f}")
