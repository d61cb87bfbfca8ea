"""Gradients against torch in float64 with a random cotangent: a few representative cases per op family."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from _oracle import convert, values

CASES = {
    # name: (fn(lib, *xs), input shapes, positive inputs)
    "add_broadcast": (lambda lib, a, b: a + b, [(2, 3), (3,)], False),
    "mul_broadcast": (lambda lib, a, b: a * b, [(2, 1, 3), (4, 1)], False),
    "div": (lambda lib, a, b: a / b, [(2, 3), (2, 3)], True),
    "pow": (lambda lib, a, b: a ** b, [(3,), (3,)], True),
    "exp_log_sqrt": (lambda lib, a: (a.exp() + a.log() + a.sqrt()).sin(), [(2, 3)], True),
    "tanh_sigmoid": (lambda lib, a: a.tanh() * a.sigmoid(), [(4,)], False),
    "maximum": (lambda lib, a, b: lib.maximum(a, b), [(3, 2), (2,)], False),
    "clamp": (lambda lib, a: a.clamp(-0.5, 0.5), [(5,)], False),
    "where": (lambda lib, a, b: lib.where(a > 0, a, b), [(2, 3), (3,)], False),
    "sum_mean": (lambda lib, a: a.sum(1, keepdim=True) * a.mean((0, 1)), [(2, 3, 4)], False),
    "prod": (lambda lib, a: a.prod(1), [(2, 3)], True),
    "amax_max": (lambda lib, a: a.amax(0) + a.max(1).values.sum(), [(3, 3)], False),
    "var_std_norm": (lambda lib, a: a.var(0) + a.std(1).sum() + a.norm(), [(3, 4)], False),
    "logsumexp": (lambda lib, a: a.logsumexp(1), [(2, 5)], False),
    "reshape_permute": (lambda lib, a: a.reshape(3, 2, 2).permute(2, 0, 1).flatten(1), [(2, 6)], False),
    "transpose_expand": (lambda lib, a: a.transpose(0, 1).unsqueeze(0).expand(2, 3, 2), [(2, 3)], False),
    "cat_stack_split": (lambda lib, a, b: lib.stack([lib.cat([a, b], 0)[:3], b.split(1)[0].expand(3, 2)]),
                        [(2, 2), (2, 2)], False),
    "getitem": (lambda lib, a: a[0, :, [1, 1, 2]] * a[..., 1:, None].sum(), [(2, 3, 4)], False),
    "gather": (lambda lib, a: a.gather(1, lib.tensor([[0, 0], [2, 1]])), [(2, 3)], False),
    "index_select": (lambda lib, a: a.index_select(0, lib.tensor([1, 1, 0])), [(2, 3)], False),
    "matmul_batched": (lambda lib, a, b: a @ b, [(2, 1, 3, 4), (3, 4, 2)], False),
    "matmul_vec": (lambda lib, a, b: a @ b, [(4,), (2, 4, 3)], False),
    "mm_mv_dot": (lambda lib, a, b, c: lib.mv(lib.mm(a, b), c).dot(c), [(2, 3), (3, 2), (2,)], False),
    "outer": (lambda lib, a, b: lib.outer(a, b), [(3,), (2,)], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_matches_torch(name):
    fn, in_shapes, positive = CASES[name]
    inputs = [(values(s, "float64", i, positive=positive), "float64") for i, s in enumerate(in_shapes)]
    ours, theirs = convert(inputs, requires_grad=True)
    out_o, out_t = fn(st, *ours), fn(torch, *theirs)
    cot = values(tuple(out_t.shape), "float64", 99)
    out_o.backward(st.from_numpy(cot.copy()))
    out_t.backward(torch.from_numpy(cot.copy()))
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert o.grad is not None, f"input {i} has no grad"
        assert tuple(o.grad.shape) == tuple(t.grad.shape)
        np.testing.assert_allclose(o.grad.numpy(), t.grad.numpy(), rtol=1e-9, atol=1e-10, err_msg=f"input {i}")
