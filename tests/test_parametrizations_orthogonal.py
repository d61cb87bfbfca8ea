"""``nn.utils.parametrizations.orthogonal`` and ``geqrf`` against torch: every map (matrix_exp, cayley,
householder, and the default's choice), with and without trivialization, square, tall, wide and batched
weights; the weight, its orthogonality and the original's gradient."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st


def _orthogonal_weight(lib: Any, shape: tuple[int, ...], omap: str | None, triv: bool) -> tuple[Any, Any]:
    w = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    m = lib.nn.Linear(shape[-1], shape[-2], bias=False)
    m.weight = lib.nn.Parameter(lib.tensor(w))
    lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=omap, use_trivialization=triv)
    weight = m.weight
    (weight * lib.tensor(np.arange(weight.numel(), dtype=np.float32).reshape(shape))).sum().backward()
    return weight.detach().numpy(), m.parametrizations.weight.original.grad.numpy()


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
@pytest.mark.parametrize("omap", [None, "matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("triv", [True, False])
def test_orthogonal_matches_torch(shape: tuple[int, ...], omap: str | None, triv: bool) -> None:
    ours, ours_grad = _orthogonal_weight(st, shape, omap, triv)
    theirs, theirs_grad = _orthogonal_weight(torch, shape, omap, triv)
    np.testing.assert_allclose(ours, theirs, atol=1e-5)
    n, k = shape[-2:]
    q = ours if n >= k else np.swapaxes(ours, -1, -2)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(min(n, k)), q.shape[:-2] + (min(n, k),) * 2),
                               atol=1e-5)
    if triv and n != k:
        return  # (the gradient goes through the random columns that complete the base: shapetorch's own draws)
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-3, atol=1e-3)


def test_orthogonal_assignment_and_refusals_match_torch() -> None:
    for lib in (st, torch):
        m = lib.nn.Linear(3, 3)
        lib.nn.utils.parametrizations.orthogonal(m)
        q = lib.tensor(np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0].astype(np.float32))
        m.weight = q
        np.testing.assert_allclose(m.weight.detach().numpy(), q.numpy(), atol=1e-5)
        with pytest.raises(ValueError):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError):
            lib.nn.utils.parametrizations.orthogonal(lib.nn.Linear(3, 3), name="bias")


def test_geqrf_matches_torch_and_expands_to_q() -> None:
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    a, tau = torch.geqrf(torch.tensor(x))
    got = st.geqrf(st.tensor(x))
    assert type(got).__name__ == "geqrf"
    np.testing.assert_allclose(got.a.numpy(), a.numpy(), atol=1e-12)
    np.testing.assert_allclose(got.tau.numpy(), tau.numpy(), atol=1e-12)
    q = st.linalg.householder_product(got.a, got.tau).numpy()
    np.testing.assert_allclose(q @ np.triu(got.a.numpy()[..., :3, :]), x, atol=1e-12)
    r = st.geqrf(st.tensor(x, requires_grad=True))
    assert r.a.grad_fn.name() == "GeqrfBackward0"
    with pytest.raises(RuntimeError):
        r.a.sum().backward()
    with pytest.raises(RuntimeError):
        st.geqrf(st.ones(3))
