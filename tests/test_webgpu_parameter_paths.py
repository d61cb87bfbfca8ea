"""On WebGPU, a module moved with ``.to("webgpu")`` and its inputs share one device object (NOTE [one device object]
in ``_device``), so the ops mixing parameters and activations take the engine's fast paths (NOTE [plain tensor
types] in ``_tensor``) and give the CPU's values and gradients."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shapetorch as st
import shapetorch._engine.primitives as P
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

W = np.array([[0.5, -1.5, 2.0], [0.25, 1.0, -0.75]], np.float32)
X = np.array([[1.5, 0.5, -1.0], [2.0, -0.5, 0.25]], np.float32)


def test_parameters_and_inputs_share_the_device_and_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    lin = st.nn.Linear(3, 2).to("webgpu")
    x = st.tensor(X, device="webgpu")
    assert lin.weight._device is x._device and lin.bias._device is x._device
    w = st.nn.Parameter(st.tensor(W, device="webgpu"))
    assert w._device is x._device
    unpacked: list[str] = []
    unpack = P.Prim._unpack

    def logged(self: P.Prim, args: tuple[Any, ...]) -> Any:
        unpacked.append(self.name)
        return unpack(self, args)

    monkeypatch.setattr(P.Prim, "_unpack", logged)
    y = (w * x).exp() + w
    assert unpacked == []
    monkeypatch.undo()
    y.sum().backward()
    wc = st.nn.Parameter(st.tensor(W))
    yc = (wc * st.tensor(X)).exp() + wc
    yc.sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), yc.detach().numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.grad.cpu().numpy(), wc.grad.numpy(), rtol=1e-5)
