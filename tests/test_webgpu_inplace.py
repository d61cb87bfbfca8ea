"""In-place ops on WebGPU write the tensor they modify: the elementwise kernel that computes the new values binds
the tensor's own buffer as its output (no temporary and no copy dispatch), views stay coherent with their base,
the version counter moves, and the values are torch's. Also the submit policy: a batch is submitted every
``RT.submit_every`` dispatches and when an optimizer step starts (the end of a backward pass).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import DEV, data, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)


def dispatches() -> int:
    return int(st.memory_stats()["num_dispatches"])


# (name, the in-place op on shapetorch or torch alike, the dispatches it takes: its argument's own kernels, if any,
# and one that writes ``x``; a copy into ``x`` would make one more)
OPS: list[tuple[str, Callable[[Any, Any], Any], int]] = [
    ("add_", lambda x, y: x.add_(y), 1),
    ("add_ alpha", lambda x, y: x.add_(y, alpha=0.5), 2),  # y * alpha, then the add
    ("sub_ scalar", lambda x, y: x.sub_(1.5), 1),
    ("mul_", lambda x, y: x.mul_(y), 1),
    ("div_", lambda x, y: x.div_(y.abs() + 1), 3),
    ("mul_ broadcast row", lambda x, y: x.mul_(y[0]), 1),
    ("exp_", lambda x, y: x.exp_(), 1),
    ("clamp_", lambda x, y: x.clamp_(-0.5, 0.5), 6),  # a composite (as x.clamp(-0.5, 0.5)), its last kernel writes x
    ("relu_", lambda x, y: x.relu_(), 1),
    ("zero_", lambda x, y: x.zero_(), 1),
    ("fill_", lambda x, y: x.fill_(2.5), 1),
    ("copy_ cast", lambda x, y: x.copy_(y.to(torch.int32 if isinstance(y, torch.Tensor) else st.int32)), 2),
    ("masked_fill_", lambda x, y: x.masked_fill_(y > 0, -1.0), 3),  # y > 0, the fill value, the select
    ("self + self", lambda x, y: x.add_(x), 1),
]
NAMES = [n for n, _, _ in OPS]


@pytest.mark.parametrize("view", ["whole", "column", "transposed"])
@pytest.mark.parametrize("name,op,count", OPS, ids=NAMES)
def test_inplace_ops_match_torch_and_update_the_base(name, op, count, view):
    a, b = data((4, 6)), data((4, 6), seed=1)
    pick: dict[str, Callable[[Any], Any]] = {"whole": lambda t: t, "column": lambda t: t[:, 1:4],
                                             "transposed": lambda t: t.t()}
    base, other = st.tensor(a, device=DEV), st.tensor(b, device=DEV)
    tbase, tother = torch.tensor(a), torch.tensor(b)
    x, tx = pick[view](base), pick[view](tbase)
    y, ty = pick[view](other), pick[view](tother)
    version = base._version
    got = op(x, y)
    op(tx, ty)
    assert got is x
    assert base._version > version and x._version == base._version
    np.testing.assert_allclose(base.numpy(), tbase.numpy(), rtol=1e-5, atol=1e-6)  # the base sees the write
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(other.numpy(), b)  # the operand is untouched


@pytest.mark.parametrize("name,op,count", OPS, ids=NAMES)
def test_inplace_ops_record_no_copy(name, op, count):
    """The op's kernels only, the last of them writing the tensor: no out-of-place result copied into ``self``
    (``copy_`` of an int32 tensor into a float one: the cast is that kernel, and the copy_ is the second)."""
    x, y = st.tensor(data((4, 6)), device=DEV), st.tensor(data((4, 6), seed=1), device=DEV)
    col = x[:, 2]  # a strided view: written through its strides
    st.synchronize()
    before = dispatches()
    op(x, y)
    assert dispatches() - before == count
    before = dispatches()
    op(col, y[:, 0])
    assert dispatches() - before == count


def test_a_result_the_program_holds_is_copied_not_taken():
    """``x.copy_(c)`` of a tensor ``c`` that was just computed must leave ``c`` its own buffer: a later write to
    ``x`` does not change ``c``."""
    a, b = data((3, 5)), data((3, 5), seed=1)
    x, y, z = (st.tensor(v, device=DEV) for v in (a, b, a))
    c = y * 2
    x.copy_(c)
    x.add_(1)
    np.testing.assert_allclose(c.numpy(), b * 2, rtol=1e-6)
    np.testing.assert_allclose(x.numpy(), b * 2 + 1, rtol=1e-6)
    w = z.mul_(3)  # returns self, which the program holds: that is fine
    assert w is z
    np.testing.assert_allclose(z.numpy(), a * 3, rtol=1e-6)


def test_disjoint_views_of_one_buffer():
    """Rows of one tensor: the operand shares the written buffer but not its elements, and is read from a copy
    (WebGPU cannot bind one buffer for reading and writing in a dispatch)."""
    a = data((3, 4))
    x, tx = st.tensor(a, device=DEV), torch.tensor(a)
    x[0].add_(x[2])
    tx[0].add_(tx[2])
    x[1].mul_(x[1])
    tx[1].mul_(tx[1])
    np.testing.assert_allclose(x.numpy(), tx.numpy(), rtol=1e-6)


def test_gradients_through_inplace_ops_match_torch():
    """With autograd recording, ``self`` is snapshotted and the kernel still writes it; an op whose backward uses
    its result (exp_) keeps that result apart from ``self``."""
    a = data((3, 4))
    for lib in (st, torch):
        w = lib.tensor(a, requires_grad=True, **({"device": DEV} if lib is st else {}))
        z = w * 1
        z.mul_(3)
        z.add_(z)
        u = (w * 1).exp_()
        (z.sum() + (u * u).sum()).backward()
        if lib is st:
            got = w.grad.numpy()
        else:
            want = w.grad.numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_an_expanded_tensor_is_refused_as_on_the_cpu():
    """torch refuses an in-place op on a tensor whose elements share memory (the result would depend on the
    order of the writes); fill_ and zero_ write one value, so they are allowed."""
    for dev in (DEV, "cpu"):
        x = st.zeros(4, device=dev)
        with pytest.raises(st.ShapeError) as e:
            x.expand(3, 4).add_(1)
        assert e.value.code == "inplace_error_internal_overlap"
        x.expand(3, 4).fill_(2.0)
        np.testing.assert_allclose(x.numpy(), [2, 2, 2, 2])
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(4).expand(3, 4).add_(1)


def test_setitem_without_grad_writes_in_place():
    a = data((4, 5))
    x, tx = st.tensor(a, device=DEV), torch.tensor(a)
    version = x._version
    st.synchronize()
    before = dispatches()
    x[1:3, ::2] = 7.0
    assert dispatches() - before == 1
    tx[1:3, ::2] = 7.0
    assert x._version == version + 1
    np.testing.assert_allclose(x.numpy(), tx.numpy())


# -- submits -------------------------------------------------------------------------------------------------
def submits() -> int:
    from shapetorch.backends.webgpu.runtime import RT

    return RT.n_submit


def test_a_batch_is_submitted_every_n_dispatches(monkeypatch):
    from shapetorch.backends.webgpu.runtime import RT

    x = st.tensor(data((8,)), device=DEV)
    st.synchronize()
    monkeypatch.setattr(RT, "submit_every", 8)
    before = submits()
    y = x
    for _ in range(20):
        y = y + 1  # one dispatch each; the 9th and the 17th find a full batch and submit it first
    assert submits() - before == 2
    np.testing.assert_allclose(y.numpy(), x.numpy() + 20, rtol=1e-6)
    assert submits() - before == 3  # the read submits the rest


@pytest.mark.parametrize("at_step", [True, False])
def test_a_training_step_submits_when_its_optimizer_step_starts(monkeypatch, at_step):
    """The end of the backward pass (the optimizer's first update) submits the forward and backward, so the device
    runs them while the host records the rest; the updates go with the next batch. Without that policy a step
    that fits one batch is submitted only by a sync."""
    import shapetorch.nn.functional as F
    from shapetorch.backends.webgpu.runtime import RT

    monkeypatch.setattr(RT, "submit_every", 1 << 20)
    monkeypatch.setattr(RT, "submit_at_step", at_step)
    st.manual_seed(0)
    # deep enough that its forward and backward pass STEP_SUBMIT_MIN dispatches
    model = st.nn.Sequential(*[m for _ in range(6) for m in (st.nn.Linear(12, 12), st.nn.GELU(), st.nn.LayerNorm(12))],
                             st.nn.Linear(12, 5)).to(DEV)
    opt = st.optim.Adam(model.parameters(), lr=1e-2)
    xs, ys = st.tensor(data((16, 12)), device=DEV), st.tensor(np.arange(16) % 5, device=DEV)
    per_step = []
    for _ in range(3):
        st.synchronize()
        before = submits()
        opt.zero_grad()
        F.cross_entropy(model(xs), ys).backward()
        opt.step()
        per_step.append(submits() - before)
    # (the first step makes the optimizer's state between its updates, so it may submit again there)
    assert per_step[1:] == ([1, 1] if at_step else [0, 0])
    assert per_step[0] >= 1 if at_step else per_step[0] == 0


def test_a_short_step_is_not_submitted_early(monkeypatch):
    """Under STEP_SUBMIT_MIN dispatches the early submit would cost the host more than it gives the device."""
    import shapetorch.nn.functional as F
    from shapetorch.backends.webgpu import kernels
    from shapetorch.backends.webgpu.runtime import RT

    monkeypatch.setattr(RT, "submit_every", 1 << 20)
    model = st.nn.Sequential(st.nn.Linear(12, 9), st.nn.ReLU(), st.nn.Linear(9, 5)).to(DEV)
    opt = st.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    xs, ys = st.tensor(data((16, 12)), device=DEV), st.tensor(np.arange(16) % 5, device=DEV)
    counts = []
    for _ in range(3):
        st.synchronize()
        before, d0 = submits(), dispatches()
        opt.zero_grad()
        F.cross_entropy(model(xs), ys).backward()
        opt.step()
        counts.append((submits() - before, dispatches() - d0))
    assert all(n < kernels.STEP_SUBMIT_MIN for _, n in counts)
    assert [s for s, _ in counts[1:]] == [0, 0]
