# A small U-Net for segmentation: double conv blocks, max-pool down, ConvTranspose2d up, skip connections
# with torch.cat, a BCEWithLogits + Dice loss, and Adam.
import torch
import torch.nn as nn
import torch.nn.functional as F


class DoubleConv(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(in_ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True),
            nn.Conv2d(out_ch, out_ch, 3, padding=1, bias=False), nn.BatchNorm2d(out_ch), nn.ReLU(inplace=True))

    def forward(self, x):
        return self.block(x)


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.down1, self.down2 = DoubleConv(1, 4), DoubleConv(4, 8)
        self.pool = nn.MaxPool2d(2)
        self.bottleneck = DoubleConv(8, 16)
        self.up2, self.conv2 = nn.ConvTranspose2d(16, 8, 2, stride=2), DoubleConv(16, 8)
        self.up1, self.conv1 = nn.ConvTranspose2d(8, 4, 2, stride=2), DoubleConv(8, 4)
        self.out = nn.Conv2d(4, 1, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottleneck(self.pool(d2))
        u2 = self.conv2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.conv1(torch.cat([self.up1(u2), d1], dim=1))
        return self.out(u1)


def dice_loss(logits, target, eps=1.0):
    probs = torch.sigmoid(logits)
    inter = (probs * target).sum(dim=(2, 3))
    union = probs.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


torch.manual_seed(0)
model = UNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
images = torch.randn(2, 1, 8, 8)
masks = (images > 0.5).float()
for step in range(4):
    logits = model(images)
    loss = F.binary_cross_entropy_with_logits(logits, masks) + dice_loss(logits, masks)
    opt.zero_grad()
    loss.backward()
    opt.step()
    iou = ((logits > 0) & (masks > 0)).sum() / ((logits > 0) | (masks > 0)).sum().clamp(min=1)
    print(f"step {step}: loss {loss:.4f} iou {iou:.3f} out {tuple(logits.shape)}")
