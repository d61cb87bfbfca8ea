# A MobileNet-style classifier: depthwise separable convolutions (groups=in_channels), BatchNorm, ReLU6 and
# Hardswish, a squeeze-and-excitation block with AdaptiveAvgPool2d and Hardsigmoid, mixup with a permuted
# batch and a lambda, label-smoothed cross entropy, AdamW with CosineAnnealingLR, and top-k accuracy.
import torch
import torch.nn as nn
import torch.nn.functional as F


class SqueezeExcite(nn.Module):
    def __init__(self, ch, r=4):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Conv2d(ch, ch // r, 1), nn.ReLU(inplace=True), nn.Conv2d(ch // r, ch, 1),
                                nn.Hardsigmoid())

    def forward(self, x):
        return x * self.fc(self.pool(x))


class DepthwiseSeparable(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.dw = nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False)
        self.bn1 = nn.BatchNorm2d(cin)
        self.se = SqueezeExcite(cin)
        self.pw = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)

    def forward(self, x):
        x = F.relu6(self.bn1(self.dw(x)))
        return F.hardswish(self.bn2(self.pw(self.se(x))))


class TinyMobileNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True))
        self.blocks = nn.Sequential(DepthwiseSeparable(8, 16, 1), DepthwiseSeparable(16, 24, 2))
        self.head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(24, num_classes))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


torch.manual_seed(0)
images = torch.randn(24, 3, 16, 16)
labels = torch.randint(0, 5, (24,))
model = TinyMobileNet()
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=6, eta_min=1e-4)
for epoch in range(6):
    model.train()
    for i in range(0, 24, 8):
        x, y = images[i:i + 8], labels[i:i + 8]
        lam = 0.7
        perm = torch.randperm(x.size(0))
        mixed = lam * x + (1 - lam) * x[perm]
        out = model(mixed)
        loss = lam * criterion(out, y) + (1 - lam) * criterion(out, y[perm])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch} loss {loss.item():.4f} lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    logits = model(images)
    _, top3 = logits.topk(3, dim=1, largest=True, sorted=True)
    correct = top3.eq(labels.view(-1, 1).expand_as(top3))
    top1 = correct[:, :1].reshape(-1).float().sum(0, keepdim=True)
    top3_acc = correct[:, :3].reshape(-1).float().sum(0)
    print(f"top1 {top1.mul_(100.0 / 24).item():.2f} top3 {top3_acc.mul_(100.0 / 24).item():.2f}")
    print("running_var", model.blocks[1].bn2.running_var[:4].numpy().round(4))
    print("num_batches_tracked", model.stem[1].num_batches_tracked.item())
n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
print(f"{n_params:,} trainable parameters")
