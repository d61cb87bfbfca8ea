"""Views and in-place writes on WebGPU give the CPU's gradients (NOTE [view + in-place] in the tensor module): a view
of a written base takes AsStridedBackward0 of the base's current history, and a write into a view of a transposed
or offset base records the base's CopySlices, from the device arrays' offsets and strides as from NumPy's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import shapetorch as st
from test_webgpu import DEV, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


def _stale_slice(x: Any) -> Any:
    y = x * 1
    a = y[:, :2]
    y.mul_(2)
    return (a * a).sum()


def _sibling_view(x: Any) -> Any:
    y = x * 1
    a, b = y[0], y[1]
    a.mul_(3)
    assert b.grad_fn.name() == "AsStridedBackward0"
    return b.sum() + (a * a).sum()


def _transposed_base(x: Any) -> Any:
    y = x.t() * 1  # (2, 3), its layout the transpose's on the CPU; written through a row
    y[0].mul_(2)
    y[1, 1:].add_(y[0, :2].detach())
    return (y * y).sum()


def _offset_base(x: Any) -> Any:
    y = (x * 1)[1:]  # a view at an offset into its base; the base written through it, read as a whole after
    y[:, 0].mul_(x[0, 0])
    b = y.unsqueeze(0)[0, 1]
    return (y * y).sum() + (b * 3).sum()


def _strided_root(x: Any) -> Any:
    y = st.empty_strided((2, 3), (1, 2), device=x.device)  # a tensor of its own, laid out column-major
    y.copy_(x.t() * 1)
    y[1].mul_(x[2, 0])
    a = y[:, 1:]
    y[0, 2].zero_()
    return (a * a).sum() + (y * 3).sum()


def _diagonal(x: Any) -> Any:
    y = x[:2, :2] * 1
    d = y.diagonal()
    row = y[1]
    d.mul_(d.detach() + 1)
    return (row * row).sum() + (y * 2).sum()


@pytest.mark.parametrize("program", [_stale_slice, _sibling_view, _transposed_base, _offset_base, _strided_root, _diagonal],
                         ids=lambda f: f.__name__)
def test_webgpu_gradient_is_the_cpus(program: Callable[[Any], Any]) -> None:
    arr = np.arange(1.0, 7.0, dtype=np.float32).reshape(3, 2)
    grads = []
    for dev in ("cpu", DEV):
        x = st.tensor(arr, device=dev, requires_grad=True)
        program(x).backward()
        assert x.grad is not None
        grads.append(x.grad.cpu().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)


def test_stale_view_moved_to_webgpu_takes_its_new_node() -> None:
    grads = []
    for dev in ("cpu", DEV):
        x = st.tensor(np.arange(1.0, 4.0, dtype=np.float32), requires_grad=True)
        y = x * 1
        a = y[:2]
        y.mul_(2)  # a's node is stale: moving it to the device reads its grad_fn
        moved = a.to(dev)
        (moved * moved).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grads[0], [8.0, 16.0, 0.0])
