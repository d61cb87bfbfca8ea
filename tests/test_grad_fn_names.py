"""The backward node names users read in every printed tensor that requires grad (``tensor(0.93,
grad_fn=<NllLossBackward0>)``) and in ``grad_fn.name()``: torch's, op by op, for the composites shapetorch builds
from other primitives (their last primitive's node is renamed to torch's). Each name is checked against torch's."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import shapetorch as st

CASES: dict[str, Any] = {
    "max": lambda lib, x: x.max(), "min": lambda lib, x: x.min(), "max_dim": lambda lib, x: x.max(1).values,
    "min_dim_keepdim": lambda lib, x: x.min(1, keepdim=True)[0], "norm": lambda lib, x: x.norm(),
    "norm_p1_dim": lambda lib, x: x.norm(p=1, dim=1), "norm_inf": lambda lib, x: x.norm(p=float("inf")),
    "linalg_norm": lambda lib, x: lib.linalg.norm(x), "vector_norm": lambda lib, x: lib.linalg.vector_norm(x, 3),
    "std": lambda lib, x: x.std(), "std_dim": lambda lib, x: x.std(1), "std_mean": lambda lib, x: lib.std_mean(x, 1),
    "var_mean": lambda lib, x: lib.var_mean(x, 1), "logsumexp": lambda lib, x: x.logsumexp(1),
    "logsumexp_keepdim": lambda lib, x: x.logsumexp(1, keepdim=True), "nansum": lambda lib, x: x.nansum(1),
    "clamp": lambda lib, x: x.clamp(0, 1), "clamp_min": lambda lib, x: x.clamp(min=0), "clip": lambda lib, x: x.clip(max=1),
    "clamp_tensor": lambda lib, x: x.clamp(min=x.detach() * 0), "clamp_min_fn": lambda lib, x: lib.clamp_min(x, 0),
    "clamp_max_tensor": lambda lib, x: x.clamp_max(x.detach()), "stack": lambda lib, x: lib.stack([x, x], 1),
    "repeat": lambda lib, x: x.repeat(2, 1), "tile": lambda lib, x: x.tile(2), "square": lambda lib, x: x.square(),
    "lerp": lambda lib, x: lib.lerp(x, x * 2, 0.3), "lerp_tensor": lambda lib, x: lib.lerp(x, x * 2, x.detach()),
    "xlogy_number_other": lambda lib, x: lib.xlogy(x, 2), "xlogy_number_self": lambda lib, x: lib.xlogy(2, x),
    "xlogy_tensors": lambda lib, x: lib.xlogy(x, x + 1), "xlogy_": lambda lib, x: (x * 1).xlogy_(2),
    "copysign_number": lambda lib, x: lib.copysign(x, 2), "copysign_tensors": lambda lib, x: lib.copysign(x, x),
    "div_floor": lambda lib, x: x.div(2, rounding_mode="floor"), "div_trunc": lambda lib, x: x.div(x + 3, rounding_mode="trunc"),
    "div_floor_": lambda lib, x: (x * 1).div_(2, rounding_mode="floor"), "div_true": lambda lib, x: x.div(2),
    "addcmul": lambda lib, x: lib.addcmul(x, x, x), "addcdiv": lambda lib, x: lib.addcdiv(x, x, x + 1),
    "trace": lambda lib, x: x[:3].trace(), "tril": lambda lib, x: x.tril(), "triu": lambda lib, x: x.triu(1),
    "cummax": lambda lib, x: x.cummax(0).values, "cummin": lambda lib, x: x.cummin(1)[0],
    "sort": lambda lib, x: x.sort(1, descending=True).values, "msort": lambda lib, x: lib.msort(x),
    "topk": lambda lib, x: x.topk(2).values, "kthvalue": lambda lib, x: x.kthvalue(2, 1).values,
    "take_along_dim": lambda lib, x: lib.take_along_dim(x, lib.tensor([[0], [2], [1], [0]]), 1),
    "glu": lambda lib, x: lib.nn.functional.glu(lib.cat([x, x], 1)),
    "threshold": lambda lib, x: lib.nn.functional.threshold(x, 0.5, 0.0),
    "prelu": lambda lib, x: lib.nn.functional.prelu(x, lib.ones(1)),
    "embedding": lambda lib, x: lib.nn.functional.embedding(lib.tensor([0, 2]), x),
    "embedding_padding": lambda lib, x: lib.nn.functional.embedding(lib.tensor([0, 2]), x, padding_idx=0),
    "embedding_bag": lambda lib, x: lib.nn.functional.embedding_bag(lib.tensor([[0, 2]]), x),
    "cosine_similarity": lambda lib, x: lib.nn.functional.cosine_similarity(x, x + 1),
    "pdist": lambda lib, x: lib.nn.functional.pdist(x), "layer_norm": lambda lib, x: lib.nn.functional.layer_norm(x, (3,)),
    "layer_norm_affine": lambda lib, x: lib.nn.functional.layer_norm(x, (3,), lib.ones(3), lib.zeros(3)),
    "group_norm": lambda lib, x: lib.nn.functional.group_norm(x.reshape(2, 6, 1), 3),
    "cross_entropy": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 0])),
    "cross_entropy_none": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 0]), reduction="none"),
    "cross_entropy_smoothing": lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([0, 1, 2, 0]),
                                                                             label_smoothing=0.1),
    "cross_entropy_3d_none": lambda lib, x: lib.nn.functional.cross_entropy(x.reshape(2, 3, 2),
                                                                           lib.zeros(2, 2, dtype=lib.long), reduction="none"),
    "cross_entropy_3d": lambda lib, x: lib.nn.functional.cross_entropy(x.reshape(2, 3, 2), lib.zeros(2, 2, dtype=lib.long)),
    "nll_4d": lambda lib, x: lib.nn.functional.nll_loss(x.reshape(1, 3, 2, 2), lib.zeros(1, 2, 2, dtype=lib.long)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_grad_fn_name_as_torch(case: str) -> None:
    def names(lib: Any) -> list[str]:
        x = lib.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [0.1, 0.2, 0.3], [3.0, -2.0, 1.0]], requires_grad=True)
        out = CASES[case](lib, x)
        return [t.grad_fn.name() for t in (out if isinstance(out, tuple) else (out,))]

    assert names(st) == names(torch)
