"""The backward walk (``_engine/backward.py``, NOTE [walk order]): the order nodes and leaves run in, roots
that reach each other, and the first-order backward giving bit for bit the gradients of the graph-building
one. Each against torch running the same program."""

from __future__ import annotations

import numpy as np
import torch

import shapetorch as st


def arr(t):
    return np.asarray(t.detach().numpy())


def test_a_root_reached_from_another_root_gets_both_gradients():
    """backward([z, y]) with z made from y: y's node waits for z's gradient (this once failed with a KeyError)."""
    out = {}
    for lib in (st, torch):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        y = a * 3
        z = y * y
        lib.autograd.backward([z, y], [lib.ones(2), lib.tensor([1.0, 10.0])], retain_graph=True)
        (g,) = lib.autograd.grad([z, y], a, [lib.ones(2), lib.ones(2)])
        out[lib.__name__] = (arr(a.grad), arr(g))
    for ours, theirs in zip(out["shapetorch"], out["torch"]):
        np.testing.assert_array_equal(ours, theirs)


def _run_order(lib):
    """The order in which nodes and leaves run on a graph with shared inputs, diamonds and two leaves."""
    log: list[str] = []
    a = lib.tensor([0.5, 1.5], requires_grad=True)
    b = lib.tensor([2.0, -1.0], requires_grad=True)
    k = lib.tensor([0.25, 3.0], requires_grad=True)
    c = a * b
    d = c.exp()
    e = c.sin() * a
    f = (d + e).tanh() * k
    loss = f.sum() + c.sum()
    for name, t in (("c", c), ("d", d), ("e", e), ("f", f)):
        t.grad_fn.register_prehook(lambda g, name=name: log.append(name))
    for name, t in (("a", a), ("b", b), ("k", k)):
        t.register_post_accumulate_grad_hook(lambda t, name=name: log.append("acc " + name))
    loss.backward()
    return log, arr(a.grad), arr(b.grad), arr(k.grad)


def test_nodes_and_leaves_run_in_torchs_order():
    """Nodes in descending creation order, each leaf's AccumulateGrad as soon as its last consumer ran."""
    ours, theirs = _run_order(st), _run_order(torch)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-6)
    assert ours[0].index("acc k") == 1  # k's only consumer ran first


def test_grad_with_inputs_runs_only_the_nodes_that_lead_to_them():
    ran = {}
    for lib in (st, torch):
        log: list[str] = []
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        b = lib.tensor([3.0, 4.0], requires_grad=True)
        u = a.exp()
        v = b.sin()
        w = u * 2
        loss = (w + v).sum()
        for name, t in (("u", u), ("v", v), ("w", w)):
            t.grad_fn.register_prehook(lambda g, name=name: log.append(name))
        (ga,) = lib.autograd.grad(loss, a)
        ran[lib.__name__] = (log, arr(ga))
    assert ran["shapetorch"][0] == ran["torch"][0] == ["w", "u"]
    np.testing.assert_allclose(ran["shapetorch"][1], ran["torch"][1], rtol=1e-6)
