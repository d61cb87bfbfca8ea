"""The matmul family against torch: matmul's 1-D/2-D/batched-broadcast cases, mm, bmm, mv, dot, outer."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import DTYPES, compare, fast, rand, seeds, shapes, values

CODES = ("matmul_error", "batch_dimensions", "broadcast_error", "dtype_error", "method_dtype")


@hs.composite
def matmul_pairs(draw):
    """Shapes of rank 0-4 whose contraction dims mostly agree and batch dims mostly broadcast."""
    ra, rb = draw(hs.integers(0, 4)), draw(hs.integers(0, 4))
    k = draw(hs.integers(0, 3))
    a = list(draw(shapes(ra, ra)))
    b = list(draw(shapes(rb, rb)))
    if a and b and draw(hs.integers(0, 4)):
        a[-1] = k
        b[-2 if len(b) >= 2 else 0] = k
    for i in range(1, min(len(a), len(b)) - 1):
        if draw(hs.booleans()):
            a[-2 - i] = b[-2 - i] if draw(hs.booleans()) else 1
    return tuple(a), tuple(b)


@fast(60)
@given(pair=matmul_pairs(), seed=seeds)
def test_matmul(pair, seed):
    sa, sb = pair
    a, b = (values(sa, "float64", seed), "float64"), (values(sb, "float64", seed + 1), "float64")
    compare(lambda lib, x, y: lib.matmul(x, y), a, b, codes=CODES)
    compare(lambda lib, x, y: x @ y, a, b, codes=CODES)


@pytest.mark.parametrize("op,ra,rb", [("mm", 2, 2), ("bmm", 3, 3), ("mv", 2, 1), ("dot", 1, 1), ("outer", 1, 1)])
@fast(30)
@given(data=hs.data(), seed=seeds)
def test_strict_rank_products(op, ra, rb, data, seed):
    da = data.draw(hs.sampled_from([ra, ra, ra, ra - 1, ra + 1]))
    db = data.draw(hs.sampled_from([rb, rb, rb, rb + 1, max(rb - 1, 0)]))
    sa, sb = data.draw(shapes(da, da, max_side=3)), data.draw(shapes(db, db, max_side=3))
    if data.draw(hs.booleans()) and sa and sb and op != "outer":
        sa = sa[:-1] + (sb[-2] if len(sb) >= 2 else sb[0],)
        if op == "bmm" and len(sb) == 3 and len(sa) == 3:
            sa = (sb[0],) + sa[1:]
    a, b = (values(sa, "float32", seed), "float32"), (values(sb, "float32", seed), "float32")
    compare(lambda lib, x, y: getattr(lib, op)(x, y), a, b, codes=CODES)


@pytest.mark.parametrize("op", ["matmul", "mm", "dot"])
def test_matmul_dtypes(op):
    shape = (2,) if op == "dot" else (2, 2)
    bad = []
    for da in DTYPES:
        for db in ("float32", da):
            try:
                compare(lambda lib, x, y: getattr(lib, op)(x, y), (values(shape, da, 1), da), (values(shape, db, 2), db),
                        codes=CODES)
            except (AssertionError, pytest.fail.Exception) as e:
                bad.append(f"{da},{db}: {str(e).splitlines()[0][:160]}")
    assert not bad, "\n".join(bad)


def test_outer_promotes():
    a, ta = rand((3,), "int64", 1)
    b, tb = rand((2,), "float32", 1)
    compare(lambda lib, x, y: lib.outer(x, y), (a, ta), (b, tb))


def test_matmul_rule_shapes_match_torch_every_rank():
    """The matmul rule's result against torch for every pair of ranks 1-4, with batch dims that broadcast
    and inner sizes that do or do not match (a vector @ matrix kept the wrong part of `b`, unseen)."""
    import itertools

    import torch

    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.matmul import matmul_shape

    for ra, rb, inner in itertools.product(range(1, 5), range(1, 5), (3, 5)):
        a = (2, 1, 4, 3)[4 - ra:]
        b = (5, 3, 6)[max(0, 3 - rb):] if rb <= 3 else (1, 5, 3, 6)
        b = b if rb > 1 else (inner,)
        b = b if rb == 1 else b[:-2] + (inner, b[-1])
        try:
            want = tuple(torch.matmul(torch.zeros(a), torch.zeros(b)).shape)
        except RuntimeError:
            with pytest.raises(RuleError):
                matmul_shape(a, b)
            continue
        assert matmul_shape(a, b) == want, (a, b)


def test_grad_fn_names_of_linear_and_the_add_products_as_torch():
    """nn.Linear with a bias is torch's addmm on a matrix (AddmmBackward0; the view back on a vector or a
    contiguous batch), and the fused add-products carry their own names; they were MatmulBiasBackward0 and
    AddBackward0."""
    def names(lib):
        F = lib.nn.functional
        w, b = lib.ones(3, 4, requires_grad=True), lib.ones(3, requires_grad=True)
        out = [F.linear(lib.ones(*s), w, b).grad_fn.name() for s in [(2, 4), (4,), (2, 5, 4), (2, 2, 5, 4)]]
        out += [F.linear(lib.ones(*s), w).grad_fn.name() for s in [(2, 4), (4,), (2, 5, 4)]]
        out.append(F.linear(lib.ones(2, 5, 4).transpose(0, 1), w, b).grad_fn.name())
        m, w2 = lib.ones(2, 4, requires_grad=True), lib.ones(4, 3)
        out += [lib.addmm(b, m, w2).grad_fn.name(), lib.addmm(b, m, w2, beta=2, alpha=0.5).grad_fn.name(),
                lib.baddbmm(lib.ones(2, 2, 3, requires_grad=True), lib.ones(2, 2, 4), lib.ones(2, 4, 3)).grad_fn.name(),
                lib.addmv(lib.ones(2, requires_grad=True), m, lib.ones(4)).grad_fn.name(),
                lib.addbmm(b.expand(2, 3), lib.ones(2, 2, 4), lib.ones(2, 4, 3)).grad_fn.name(),
                lib.addr(lib.ones(2, 3, requires_grad=True), lib.ones(2), lib.ones(3)).grad_fn.name()]
        return out

    assert names(st) == names(torch)
