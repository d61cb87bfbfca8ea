"""split, chunk and unbind on the WebGPU device: one node for all pieces (NOTE [split node] in ``ops/joining.py``),
the pieces views of the input (no dispatch), the backward one ``cat`` (``stack``) of the pieces' gradients with
zeros for those no gradient reached. Values and gradients against torch on the CPU.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    F32,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

A = np.random.default_rng(1).normal(size=(3, 7, 5)).astype(np.float32)
CASES = {
    "split": lambda y: y.split(3, dim=1),
    "split_sizes": lambda y: y.split([2, 0, 3], dim=-1),
    "chunk": lambda y: y.chunk(2, dim=0),
    "unbind": lambda y: y.unbind(1),
}


def _run(lib, case, which, dev):
    x = lib.tensor(A, requires_grad=True)
    y = (x.to(dev) if dev else x) * 2.0
    y = y.transpose(0, 2).transpose(0, 2)
    pieces = CASES[case](y)
    terms = [(p * (i + 1.0)).pow(2).sum() for i, p in enumerate(pieces)
             if which == "all" or (which == "some" and i % 2 == 1)]
    loss = sum(terms) if terms else y.exp().sum()
    loss.backward()
    return [p.detach().cpu().numpy() for p in pieces], pieces[0].grad_fn.name(), x.grad.numpy()


@pytest.mark.parametrize("which", ["all", "some", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_split_on_the_device(case, which):
    ours, name, g = _run(st, case, which, DEV)
    theirs, tname, tg = _run(torch, case, which, None)
    assert name == tname
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o, t, rtol=F32[0], atol=F32[1])
    np.testing.assert_allclose(g, tg, rtol=F32[0], atol=F32[1])


def test_pieces_are_views_and_one_node_on_the_device():
    x = st.tensor(A, device=DEV, requires_grad=True) * 1.0
    a, b, c = x.split(3, dim=1)
    assert a.grad_fn is b.grad_fn is c.grad_fn and a.device.type == DEV
    assert all(p._base is x for p in (a, b, c))
    with pytest.raises(st.AutogradError, match="returns multiple views"):
        b.add_(1)
    y = st.tensor(A, device=DEV)
    y.unbind(0)[2].zero_()  # no grad in play: written through to the input
    np.testing.assert_array_equal(y.cpu().numpy()[2], np.zeros_like(A[2]))
