# torchvision-style BasicBlocks with BatchNorm, a downsampling shortcut, AdaptiveAvgPool2d, kaiming init,
# SGD with momentum and weight decay, and eval-mode inference.
import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        down = nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), nn.BatchNorm2d(16))
        self.layer1 = nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 16, stride=2, downsample=down))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        x = self.layer1(self.stem(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


torch.manual_seed(0)
model = TinyResNet()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
x = torch.randn(6, 3, 8, 8)
y = torch.randint(0, 5, (6,))
for step in range(4):
    opt.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y, label_smoothing=0.1)
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss:.4f}")
model.eval()
with torch.no_grad():
    print(model(x[:2]).softmax(-1))
print(model.layer1[0].bn1.running_mean[:4], model.layer1[0].bn1.num_batches_tracked)
