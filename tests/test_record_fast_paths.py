"""The per-call shortcuts of the op layer and the engine (issue 17's per-op and per-node round): ``autograd.grad``'s
walk running uncaptured nodes bare, its scalar seed, and the verdicts cached per call signature (matmul's shapes,
the views' rules). Each shortcut must give what the general path gives: the same values, the same graph, the same
errors, however the calls before it went (a stale verdict would show as a wrong answer or a missing error on a
later call with other shapes, dtypes, grad requirements or grad mode). Each against torch running the same code."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st


def arr(t):
    return np.asarray(t.detach().numpy())


def _same(ours, theirs, rtol=1e-6):
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert (o is None) == (t is None)
        if o is not None:
            assert o.dtype.name.removeprefix("shapetorch.") == str(t.dtype).removeprefix("torch."), (o.dtype, t.dtype)
            np.testing.assert_allclose(arr(o), arr(t), rtol=rtol)


# -- autograd.grad: captured and uncaptured nodes ----------------------------------------------------------------------

def _grad_of_intermediates(lib):
    """grad w.r.t. a leaf, an intermediate whose node also leads further to the leaf, and an intermediate made of
    number-only ops: the captured nodes take the general step, the others run bare."""
    a = lib.tensor([[0.5, -1.5], [2.0, 0.25]], requires_grad=True)
    b = lib.tensor([[1.0, 2.0], [3.0, -4.0]], requires_grad=True)
    c = a * b            # captured (an input below), and its node leads on to a and b
    d = c.exp() * 2.0    # not captured
    e = (d @ b).tanh()   # not captured
    loss = (e * c).sum()
    return lib.autograd.grad(loss, [c, a, d], retain_graph=True)


def test_grad_captures_intermediates_and_runs_the_rest():
    _same(_grad_of_intermediates(st), _grad_of_intermediates(torch))


def _grad_with_hooks(lib):
    log = []
    a = lib.tensor([0.5, 1.5, -2.0], requires_grad=True)
    b = a.sin()
    c = b * a
    d = c.exp()
    b.grad_fn.register_prehook(lambda g: log.append("b pre"))
    d.grad_fn.register_hook(lambda gi, go: log.append("d post"))
    c.register_hook(lambda g: g * 3)  # a tensor hook on an uncaptured node's output
    (g,) = lib.autograd.grad(d.sum(), a)
    return log, g


def test_grad_runs_node_and_tensor_hooks_of_uncaptured_nodes():
    (log, g), (tlog, tg) = _grad_with_hooks(st), _grad_with_hooks(torch)
    assert log == tlog
    _same([g], [tg])


def test_grad_of_a_scalar_loss_as_the_general_path():
    """The scalar seed: float16 and float64 losses, a 1-element non-0-d one, create_graph, and the errors of the
    roots the shortcut must not take (an integer root, a root that does not require grad)."""
    for lib_pair in ((st, torch),):
        out = []
        for lib in lib_pair:
            res = []
            for dt in ("float16", "float64"):
                a = lib.tensor([[0.5, 2.0]], dtype=getattr(lib, dt), requires_grad=True)
                loss = (a * a).sum().reshape(1, 1)  # one element, 2-d
                res += list(lib.autograd.grad(loss, a, create_graph=True))
                assert res[-1].requires_grad
            out.append(res)
        _same(out[0], out[1])
    a = st.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        st.autograd.grad(st.tensor(1.0), a)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        st.autograd.grad(a * 2, a)
