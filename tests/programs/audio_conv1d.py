# An audio classifier on synthetic waveforms: framing with Tensor.unfold and a Hann window, log energy per
# frame, then Conv1d/BatchNorm1d/MaxPool1d blocks and AdaptiveAvgPool1d; model.train()/eval(), and accuracy
# with argmax under torch.no_grad().
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def synth(n, classes=3, length=400):
    t = torch.arange(length) / 400.0
    labels = torch.randint(0, classes, (n,))
    freqs = 20.0 + 25.0 * labels.float() + torch.rand(n) * 5
    wave = torch.sin(2 * math.pi * freqs[:, None] * t[None]) + 0.3 * torch.randn(n, length)
    return wave, labels


class AudioNet(nn.Module):
    def __init__(self, frame=32, hop=16, classes=3):
        super().__init__()
        self.frame, self.hop = frame, hop
        self.register_buffer("window", torch.hann_window(frame))
        self.features = nn.Sequential(
            nn.Conv1d(frame, 16, kernel_size=3, padding=1), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 16, kernel_size=3, padding=1), nn.BatchNorm1d(16), nn.ReLU(),
            nn.AdaptiveAvgPool1d(1),
        )
        self.classifier = nn.Linear(16, classes)

    def forward(self, wave):
        frames = wave.unfold(-1, self.frame, self.hop) * self.window  # (b, n_frames, frame)
        spec = torch.log1p(frames.abs())
        h = self.features(spec.transpose(1, 2))
        return self.classifier(h.flatten(1))


torch.manual_seed(0)
train_x, train_y = synth(48)
test_x, test_y = synth(24)
model = AudioNet()
print("frames per clip:", train_x.unfold(-1, 32, 16).shape[1])
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for epoch in range(6):
    model.train()
    running = 0.0
    for i in range(0, len(train_x), 12):
        xb, yb = train_x[i : i + 12], train_y[i : i + 12]
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        running += loss.item()
    model.eval()
    with torch.no_grad():
        pred = model(test_x).argmax(dim=1)
        acc = (pred == test_y).sum().item() / len(test_y)
    print(f"epoch {epoch}: train loss {running / 4:.4f} test acc {acc:.3f}")
bn = model.features[1]
print(f"running mean[:3] {[round(v, 4) for v in bn.running_mean[:3].tolist()]} batches {bn.num_batches_tracked.item()}")
