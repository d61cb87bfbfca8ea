"""nn on the WebGPU backend: functional ops and gradients against torch, and a module + optimizer loop.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
from test_webgpu import (
    DEV,
    data,
    run,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

F = st.nn.functional


def fn(name: str, *args, **kwargs):
    return lambda lib, *xs: getattr(F if lib is st else TF, name)(*xs, *args, **kwargs)


@pytest.mark.parametrize("name,args,kwargs,shape", [
    ("relu", (), {}, (3, 5)), ("gelu", (), {}, (3, 5)), ("gelu", (), {"approximate": "tanh"}, (4,)),
    ("silu", (), {}, (3, 5)), ("softmax", (1,), {}, (3, 5)), ("log_softmax", (-1,), {}, (2, 3, 4)),
    ("pad", ((1, 2),), {}, (2, 3)), ("pad", ((1, 0, -1, 2),), {"value": 0.5}, (2, 3, 4)),
    ("layer_norm", ((4,),), {}, (2, 3, 4)),
])
def test_functional(name, args, kwargs, shape):
    run(fn(name, *args, **kwargs), data(shape))


def test_losses():
    # cross_entropy / nll_loss / max_pool2d / avg_pool2d make CPU tensors inside (zeros(()), pooling
    # windows) and so raise the mixed-device DeviceError on webgpu: reported to the nn owner.
    run(lambda lib, x, y: (F if lib is st else TF).mse_loss(x, y), data((3, 4)), data((3, 4), seed=1))
    w = data((10, 3))
    run(lambda lib, w: (F if lib is st else TF).embedding(lib.tensor([[1, 4], [4, 9]], device=w.device), w), w)


def test_module_and_optimizer_loop_matches_torch():
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(32, 6)).astype(np.float32), rng.integers(0, 3, size=32)

    def train(lib, dev):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Linear(16, 3))
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.tensor(np.random.default_rng(i).normal(size=tuple(p.shape)).astype(np.float32) * 0.3))
        model = model.to(dev)
        opt = lib.optim.Adam(model.parameters(), lr=0.05)
        x, y = lib.tensor(xs, device=dev), lib.tensor(ys, device=dev)
        losses = []
        for _ in range(4):
            opt.zero_grad()
            logits = model(x)
            loss = -(logits - logits.logsumexp(1, keepdim=True)).gather(1, y.unsqueeze(1)).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]

    ours, pw = train(st, DEV)
    theirs, tw = train(torch, "cpu")
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    for p, q in zip(pw, tw):
        np.testing.assert_allclose(p, q, rtol=1e-3, atol=1e-4)


def test_convolution_has_no_webgpu_kernel_yet():
    x, w = st.ones(1, 1, 4, 4, device=DEV), st.ones(1, 1, 2, 2, device=DEV)
    with pytest.raises(st.RegistryError, match="webgpu"):
        F.conv2d(x, w)
    assert F.conv2d(x.cpu(), w.cpu()).shape == (1, 1, 3, 3)
