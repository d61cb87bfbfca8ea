"""A small CNN on synthetic 12x12 images (which quadrant holds the bright blob), trained with SGD+momentum,
then saved and reloaded with st.save / st.load (safetensors).

    python examples/small_cnn.py [--small]
"""

from __future__ import annotations

import io
import sys

import shapetorch as st
from shapetorch import nn, optim


def blobs(n: int, gen: st.Generator) -> tuple[st.Tensor, st.Tensor]:
    labels = st.randint(0, 4, (n,), generator=gen)
    images = st.randn(n, 1, 12, 12, generator=gen) * 0.3
    rows = (labels // 2) * 6 + 3
    cols = (labels % 2) * 6 + 3
    for i in range(n):
        r, c = int(rows[i].item()), int(cols[i].item())
        images[i, 0, r - 2:r + 2, c - 2:c + 2] += 1.5
    return images, labels


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(16 * 2 * 2, 4))

    def forward(self, x: st.Tensor) -> st.Tensor:
        return self.head(self.features(x))


def main(small: bool) -> float:
    st.manual_seed(0)
    gen = st.Generator().manual_seed(1)
    x, y = blobs(64 if small else 512, gen)
    model = SmallCNN()
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    sched = optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    steps = 6 if small else 60
    loss = st.tensor(0.0)
    for step in range(steps):
        idx = st.randint(0, len(x), (32,), generator=gen)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        sched.step()
        if step % max(1, steps // 6) == 0:
            print(f"step {step:3d}  loss {loss.item():.4f}  lr {sched.get_last_lr()[0]:.4f}")
    buf = io.BytesIO()
    st.save(model.state_dict(), buf)
    clone = SmallCNN()
    clone.load_state_dict(st.load(io.BytesIO(buf.getvalue())))
    model.eval()
    clone.eval()
    with st.no_grad():
        same = bool((model(x[:8]) == clone(x[:8])).all())
        acc = (model(x).argmax(1) == y).to(st.float32).mean().item()
    print(f"final loss {loss.item():.4f}  accuracy {acc:.3f}  reloaded model identical: {same}")
    return float(loss.item())


if __name__ == "__main__":
    main("--small" in sys.argv)
