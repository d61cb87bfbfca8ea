"""Autocast's per-op policy against torch's on the CPU: the result dtype of each op under
``autocast("cpu", dtype=bfloat16)`` (lower-precision ops, float32 ops, float64 never cast, and the ops
autocast leaves alone), the values of a training step, and gradients flowing back to float32 parameters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

R = np.random.default_rng(0)


def _t(lib: Any, *shape: int, dtype: str = "float32") -> Any:
    return lib.tensor(R.standard_normal(shape).astype(np.float32)).to(getattr(lib, dtype))


def _i(lib: Any, *values: int) -> Any:
    return lib.tensor(list(values))


B = "bfloat16"
CALLS: dict[str, Callable[[Any, Any], Any]] = {
    # lower precision: floating inputs run in bfloat16
    "mm": lambda L, F: L.mm(_t(L, 2, 3), _t(L, 3, 2)),
    "bmm": lambda L, F: L.bmm(_t(L, 1, 2, 3), _t(L, 1, 3, 2)),
    "matmul": lambda L, F: _t(L, 2, 3) @ _t(L, 3, 2),
    "addmm": lambda L, F: L.addmm(_t(L, 2, 2), _t(L, 2, 3), _t(L, 3, 2)),
    "baddbmm": lambda L, F: L.baddbmm(_t(L, 1, 2, 2), _t(L, 1, 2, 3), _t(L, 1, 3, 2)),
    "addbmm": lambda L, F: L.addbmm(_t(L, 2, 2), _t(L, 1, 2, 3), _t(L, 1, 3, 2)),
    "vecdot": lambda L, F: L.linalg.vecdot(_t(L, 2, 3), _t(L, 2, 3)),
    "linear": lambda L, F: F.linear(_t(L, 2, 3), _t(L, 4, 3)),
    "linear with bias": lambda L, F: F.linear(_t(L, 2, 3), _t(L, 4, 3), _t(L, 4)),
    "nn.Linear": lambda L, F: L.nn.Linear(3, 2)(_t(L, 2, 3)),
    "conv1d": lambda L, F: F.conv1d(_t(L, 1, 2, 5), _t(L, 3, 2, 2), _t(L, 3)),
    "conv2d": lambda L, F: F.conv2d(_t(L, 1, 2, 5, 5), _t(L, 3, 2, 2, 2)),
    "nn.Conv2d reflect": lambda L, F: L.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect")(_t(L, 1, 2, 4, 4)),
    "conv_transpose2d": lambda L, F: F.conv_transpose2d(_t(L, 1, 2, 5, 5), _t(L, 2, 3, 2, 2)),
    "sdpa": lambda L, F: F.scaled_dot_product_attention(_t(L, 1, 2, 3), _t(L, 1, 2, 3), _t(L, 1, 2, 3)),
    "prelu": lambda L, F: F.prelu(_t(L, 2, 3), _t(L, 1)),
    "einsum": lambda L, F: L.einsum("ij,jk->ik", _t(L, 2, 3), _t(L, 3, 2)),
    "multihead attention": lambda L, F: L.nn.MultiheadAttention(4, 2, batch_first=True)(*[_t(L, 1, 3, 4)] * 3)[0],
    # left alone
    "mv": lambda L, F: L.mv(_t(L, 2, 3), _t(L, 3)),
    "dot": lambda L, F: L.dot(_t(L, 3), _t(L, 3)),
    "outer": lambda L, F: L.outer(_t(L, 2), _t(L, 3)),
    "bilinear": lambda L, F: F.bilinear(_t(L, 2, 3), _t(L, 2, 3), _t(L, 4, 3, 3)),
    "layer_norm": lambda L, F: F.layer_norm(_t(L, 2, 3, dtype=B), (3,)),
    "softmax": lambda L, F: F.softmax(_t(L, 2, 3, dtype=B), -1),
    "add mixed": lambda L, F: _t(L, 2, dtype=B) + _t(L, 2),
    "cat mixed": lambda L, F: L.cat([_t(L, 2, dtype=B), _t(L, 2)]),
    "mm float64": lambda L, F: L.mm(_t(L, 2, 3, dtype="float64"), _t(L, 3, 2, dtype="float64")),
    "prod with dtype": lambda L, F: _t(L, 2, 3, dtype=B).prod(dtype=L.bfloat16),
    # float32: lower-precision inputs run in float32
    "mse": lambda L, F: F.mse_loss(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "l1": lambda L, F: F.l1_loss(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "smooth l1": lambda L, F: F.smooth_l1_loss(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "huber": lambda L, F: F.huber_loss(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "cross entropy": lambda L, F: F.cross_entropy(_t(L, 2, 3, dtype=B), _i(L, 0, 2)),
    "nll": lambda L, F: F.nll_loss(_t(L, 2, 3, dtype=B), _i(L, 0, 2)),
    "bce": lambda L, F: F.binary_cross_entropy(_t(L, 2, dtype=B).sigmoid(), _t(L, 2, dtype=B).sigmoid()),
    "bce logits": lambda L, F: F.binary_cross_entropy_with_logits(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "kl div": lambda L, F: F.kl_div(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B), reduction="batchmean"),
    "margin ranking": lambda L, F: F.margin_ranking_loss(_t(L, 3, dtype=B), _t(L, 3, dtype=B), _t(L, 3, dtype=B)),
    "hinge": lambda L, F: F.hinge_embedding_loss(_t(L, 3, dtype=B), _t(L, 3, dtype=B).sign()),
    "soft margin": lambda L, F: F.soft_margin_loss(_t(L, 3, dtype=B), _t(L, 3, dtype=B).sign()),
    "cosine embedding": lambda L, F: F.cosine_embedding_loss(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B), _i(L, 1, -1)),
    "poisson": lambda L, F: F.poisson_nll_loss(_t(L, 3, dtype=B), _t(L, 3, dtype=B).abs()),
    "triplet": lambda L, F: F.triplet_margin_loss(*[_t(L, 2, 3, dtype=B) for _ in range(3)]),
    "multi margin": lambda L, F: F.multi_margin_loss(_t(L, 2, 3, dtype=B), _i(L, 0, 2)),
    "multilabel margin": lambda L, F: F.multilabel_margin_loss(_t(L, 2, 3, dtype=B), L.tensor([[0, -1, 1], [2, 1, -1]])),
    "prod": lambda L, F: _t(L, 2, 3, dtype=B).prod(),
    "cdist": lambda L, F: L.cdist(_t(L, 2, 3, dtype=B), _t(L, 2, 3, dtype=B)),
    "trace": lambda L, F: L.trace(_t(L, 3, 3, dtype=B)),
    "quantile": lambda L, F: L.quantile(_t(L, 5, dtype=B), 0.5),
    "inv": lambda L, F: L.linalg.inv((_t(L, 2, 2) + 3 * L.eye(2)).to(L.bfloat16)),
    "solve": lambda L, F: L.linalg.solve((_t(L, 2, 2) + 3 * L.eye(2)).to(L.bfloat16), _t(L, 2, dtype=B)),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_result_dtype_as_torch(name: str) -> None:
    got = []
    for lib in (torch, st):
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            got.append(str(CALLS[name](lib, lib.nn.functional).dtype).split(".")[-1])
    assert got[1] == got[0], f"{name}: torch {got[0]}, shapetorch {got[1]}"


def test_torchs_own_autocast_lists_are_covered() -> None:
    """Every op of torch's CPU autocast test lists that shapetorch has gives torch's dtype."""
    from torch.testing._internal.autocast_test_lists import AutocastCPUTestLists

    lists = AutocastCPUTestLists(torch.device("cpu"))
    checked = 0
    for group, module_t, module_s in [("torch_16", torch, st), ("torch_fp32", torch, st),
                                      ("nn_16", torch.nn.functional, st.nn.functional),
                                      ("nn_fp32", torch.nn.functional, st.nn.functional)]:
        for entry in getattr(lists, group):
            op, args = entry[0], entry[1]
            kwargs = entry[2] if len(entry) > 2 else {}
            if not hasattr(module_s, op) or op.startswith("_"):
                continue
            with torch.autocast("cpu", dtype=torch.bfloat16):
                want = getattr(module_t, op)(*args, **kwargs).dtype
            ours = [st.tensor(a.detach().numpy()) if isinstance(a, torch.Tensor) and a.dtype != torch.bfloat16
                    else st.tensor(a.float().numpy()).to(st.bfloat16) if isinstance(a, torch.Tensor) else a
                    for a in args]
            with st.autocast("cpu", dtype=st.bfloat16):
                got = getattr(module_s, op)(*ours, **kwargs).dtype
            assert got.name == str(want).split(".")[-1], f"{group} {op}: torch {want}, shapetorch {got}"
            checked += 1
    assert checked >= 17  # the others (conv_tbc, avg_pool3d, reflection_pad1d, ...) are not in shapetorch


def test_a_training_step_under_autocast_matches_torch() -> None:
    def model(lib: Any) -> Any:
        return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.GELU(), lib.nn.LayerNorm(16), lib.nn.Linear(16, 3))

    torch.manual_seed(0)
    tm = model(torch)
    sm = model(st)
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x, y = R.standard_normal((8, 6)).astype(np.float32), R.integers(0, 3, 8)
    losses = []
    for lib, m in ((torch, tm), (st, sm)):
        with lib.autocast(device_type="cpu", dtype=lib.bfloat16):
            logits = m(lib.tensor(x))
            loss = lib.nn.functional.cross_entropy(logits, lib.tensor(y))
        loss.backward()
        losses.append((logits.dtype, loss.dtype, float(loss), m[0].weight.grad.dtype, m[0].weight.grad.numpy()))
    (tl, tloss, tv, tg, tgrad), (sl, sloss, sv, sg, sgrad) = losses
    assert (str(tl), str(tloss), str(tg)) == tuple(str(d).replace("shapetorch", "torch") for d in (sl, sloss, sg))
    assert abs(sv - tv) < 2e-2 * abs(tv)  # bfloat16 arithmetic in a different order
    np.testing.assert_allclose(sgrad, tgrad, rtol=0.1, atol=2e-2)
