# Semantic segmentation losses: ConvTranspose2d decoder, 4-D cross entropy with ignore_index and class
# weights, a soft Dice loss with one_hot + permute, focal loss from log_softmax, and IoU per class.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
C = 3
imgs = torch.randn(4, 1, 16, 16)
masks = torch.randint(0, C, (4, 16, 16))
masks[:, :2, :] = 255


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.ConvTranspose2d(16, 8, kernel_size=2, stride=2)
        self.head = nn.Conv2d(8, C, 1)

    def forward(self, x):
        return self.head(F.relu(self.up(self.down(x))))


def dice_loss(logits, target, eps=1.0):
    valid = (target != 255)
    t = torch.where(valid, target, torch.zeros_like(target))
    onehot = F.one_hot(t, C).permute(0, 3, 1, 2).float() * valid.unsqueeze(1)
    probs = logits.softmax(1) * valid.unsqueeze(1)
    inter = (probs * onehot).sum(dim=(0, 2, 3))
    union = probs.sum(dim=(0, 2, 3)) + onehot.sum(dim=(0, 2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


def focal_loss(logits, target, gamma=2.0):
    logp = F.log_softmax(logits, dim=1)
    valid = target != 255
    t = target.clone()
    t[~valid] = 0
    logpt = logp.gather(1, t.unsqueeze(1)).squeeze(1)
    loss = -((1 - logpt.exp()) ** gamma) * logpt
    return loss[valid].mean()


net = Net()
weights = torch.tensor([1.0, 2.0, 0.5])
opt = torch.optim.Adam(net.parameters(), lr=1e-2)
for step in range(12):
    logits = net(imgs)
    ce = F.cross_entropy(logits, masks, weight=weights, ignore_index=255)
    loss = ce + dice_loss(logits, masks) + focal_loss(logits, masks)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0:
        print(f"step {step:2d} ce {ce.item():.4f} total {loss.item():.4f}")
with torch.no_grad():
    pred = net(imgs).argmax(1)
    valid = masks != 255
    ious = []
    for c in range(C):
        p, t = (pred == c) & valid, (masks == c) & valid
        inter, union = (p & t).sum().item(), (p | t).sum().item()
        ious.append(inter / union if union else float("nan"))
print("iou", [f"{v:.3f}" for v in ious])
print("pixel acc", f"{(pred[valid] == masks[valid]).float().mean().item():.3f}")
