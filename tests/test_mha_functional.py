"""nn.functional.multi_head_attention_forward in torch's signature (bias_k/bias_v, add_zero_attn, static_k/static_v
among the positional arguments), against torch: outputs and attention weights, batched and unbatched, with masks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import shapetorch as st
import shapetorch.nn.functional as SF

E, H, L, S, N = 4, 2, 3, 5, 2
_RNG = np.random.default_rng(0)
Q, K, V = _RNG.standard_normal((L, N, E)), _RNG.standard_normal((S, N, E)), _RNG.standard_normal((S, N, E))
W, B, WO, BO = _RNG.standard_normal((3 * E, E)), _RNG.standard_normal(3 * E), _RNG.standard_normal((E, E)), \
    _RNG.standard_normal(E)
BK, BV = _RNG.standard_normal((1, 1, E)), _RNG.standard_normal((1, 1, E))
AM, KPM = _RNG.standard_normal((L, S)), _RNG.random((N, S)) < 0.3
SK, SV = _RNG.standard_normal((N * H, S, E // H)), _RNG.standard_normal((N * H, S, E // H))


def _run(lib: Any, fl: Any, bias: bool, zero: bool, mask: bool, static: bool, unbatched: bool) -> list[np.ndarray]:
    t = lib.tensor
    q, k, v = (Q[:, 0], K[:, 0], V[:, 0]) if unbatched else (Q, K, V)
    kw: dict[str, Any] = {"training": False}
    if mask:
        kw["attn_mask"] = t(AM)
        if not unbatched:
            kw["key_padding_mask"] = t(KPM.astype(np.float64) * -1e9)
    if static:
        kw.update(static_k=t(SK), static_v=t(SV))
    out, w = fl.multi_head_attention_forward(t(q), t(k), t(v), E, H, t(W), t(B), t(BK) if bias else None,
                                             t(BV) if bias else None, zero, 0.0, t(WO), t(BO), **kw)
    return [out.detach().numpy(), w.detach().numpy()]


@pytest.mark.parametrize("bias,zero,mask,static,unbatched", [
    (False, False, False, False, False), (True, False, False, False, False), (False, True, False, False, False),
    (True, True, True, False, False), (False, False, True, True, False), (False, False, True, False, False),
    (True, True, False, False, True), (False, True, True, False, True),
])
def test_multi_head_attention_forward_as_torch(bias: bool, zero: bool, mask: bool, static: bool,
                                                 unbatched: bool) -> None:
    ours = _run(st, SF, bias, zero, mask, static, unbatched)
    theirs = _run(torch, TF, bias, zero, mask, static, unbatched)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_multi_head_attention_forward_checks_embed_dim_as_torch() -> None:
    args = (E, H, W, B, None, None, False, 0.0, WO, BO)
    for lib, fl in ((st, SF), (torch, TF)):
        conv = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        out, _ = fl.multi_head_attention_forward(lib.tensor(Q), lib.tensor(K), lib.tensor(V), float(E), *conv[1:])
        assert tuple(out.shape) == (L, N, E)
    with pytest.raises(st.ShapeError):
        SF.multi_head_attention_forward(st.tensor(Q), st.tensor(K), st.tensor(V), float("nan"),
                                        *[st.tensor(a) if isinstance(a, np.ndarray) else a for a in args[1:]])
