"""An MLP classifier on a synthetic 2-D spiral, trained with Adam and a OneCycle schedule.

    python examples/mlp_classifier.py           # a few seconds
    python examples/mlp_classifier.py --small   # what the test runs
"""

from __future__ import annotations

import math
import sys

import shapetorch as st
from shapetorch import nn, optim
from shapetorch.utils.data import DataLoader, TensorDataset


def spiral(n_per_class: int, classes: int, gen: st.Generator) -> tuple[st.Tensor, st.Tensor]:
    xs, ys = [], []
    for c in range(classes):
        r = st.linspace(0.05, 1.0, n_per_class)
        angle = st.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + st.randn(n_per_class, generator=gen) * 0.2
        xs.append(st.stack([r * angle.sin(), r * angle.cos()], dim=1))
        ys.append(st.full((n_per_class,), c, dtype=st.int64))
    return st.cat(xs), st.cat(ys)


def main(small: bool) -> float:
    st.manual_seed(0)
    gen = st.Generator().manual_seed(0)
    x, y = spiral(60 if small else 200, 3, gen)
    loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True, generator=gen)
    model = nn.Sequential(nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 3))
    epochs = 5 if small else 20
    opt = optim.Adam(model.parameters(), lr=1e-2)
    sched = optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=epochs * len(loader))
    loss_fn = nn.CrossEntropyLoss()
    loss = st.tensor(math.nan)
    for epoch in range(epochs):
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
        if epoch % max(1, epochs // 5) == 0:
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
    model.eval()
    with st.no_grad():
        acc = (model(x).argmax(1) == y).to(st.float32).mean().item()
    print(f"final loss {loss.item():.4f}  train accuracy {acc:.3f}")
    return float(loss.item())


if __name__ == "__main__":
    main("--small" in sys.argv)
