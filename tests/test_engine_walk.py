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


# -- a first-order backward gives the gradients of a graph-building one, bit for bit -----------------------

def _first_and_second_order_grads(name: str, sample, rng) -> tuple[list, list] | None:
    """The gradients of ``shapetorch.<name>`` on one OpInfo sample, once without and once with create_graph,
    through the same graph; None where shapetorch refuses the sample or nothing is differentiable."""
    from _opinfo_tables import _tensors, to_st

    leaves: dict[int, st.Tensor] = {}
    try:
        out = getattr(st, name)(to_st(sample.input, leaves), *to_st(sample.args, leaves), **to_st(sample.kwargs, leaves))
    except (st.ShapetorchError, TypeError, ValueError, RuntimeError, NotImplementedError):
        return None  # an argument shapetorch refuses (its own tests check which, against torch)
    outs = [o for o in _tensors(out) if o.requires_grad]
    ins = list(leaves.values())
    if not outs or not ins:
        return None
    cots = [st.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype) if not o.is_complex() else
            st.tensor(rng.standard_normal(tuple(o.shape)) + 1j * rng.standard_normal(tuple(o.shape)), dtype=o.dtype)
            for o in outs]
    first = st.autograd.grad(outs, ins, cots, retain_graph=True, allow_unused=True)
    second = st.autograd.grad(outs, ins, cots, create_graph=True, allow_unused=True)
    return list(first), list(second)


# ops whose first-order backward sums rows as BLAS dot products (the thread pool's row sums) where the graph's
# sum is NumPy's pairwise one: the last bit may differ, so they are compared to 1e-12
FUSED_ROW_SUMS = {"softmax", "log_softmax", "special_softmax", "special_log_softmax"}


def test_first_order_backward_equals_the_graph_building_one_bit_for_bit():
    """Every public function that torch's OpInfo database has samples for (the registry's FUNCTIONS): the
    gradients of create_graph=False (the vjps run without building a graph) and of create_graph=True (each
    vjp op recorded) are the same bits. A fused kernel that takes a different formula without a graph (batch
    norm, cross entropy, attention) is compared with a tolerance instead."""
    import torch.testing._internal.common_methods_invocations  # noqa: F401  (the OpInfo database)

    from _opinfo_tables import _db
    from shapetorch.ops._registry import FUNCTIONS

    rng = np.random.default_rng(0)
    compared: set[str] = set()
    differ: list[str] = []
    db = _db()
    for name in sorted(FUNCTIONS):
        op = db.get((name, ""))
        if op is None or not op.supports_autograd:
            continue
        for sample in list(op.sample_inputs("cpu", torch.float64, requires_grad=True))[:2]:
            got = _first_and_second_order_grads(name, sample, rng)
            if got is None:
                continue
            for i, (a, b) in enumerate(zip(*got)):
                if (a is None) != (b is None):
                    differ.append(f"{name} input {i}: a gradient in one mode only")
                elif a is not None and name in FUSED_ROW_SUMS and np.allclose(
                        a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-15, equal_nan=True):
                    pass
                elif a is not None and not np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True):
                    differ.append(f"{name} input {i}: max difference "
                                  f"{np.nanmax(np.abs(a.detach().numpy() - b.detach().numpy()))}")
            compared.add(name)
    assert not differ, differ
    assert len(compared) >= 150, f"only {len(compared)} ops compared"


def test_first_order_equals_graph_building_with_mixed_dtypes_and_broadcasting():
    """The cases the OpInfo samples (one dtype, mostly one shape) leave out: an input's gradient cast back
    to its dtype (float32 with float64, complex with real) and summed back over broadcast dims."""
    rng = np.random.default_rng(1)
    a = st.tensor(rng.standard_normal((3, 1, 4)).astype(np.float32), requires_grad=True)
    b = st.tensor(rng.standard_normal((2, 4)), requires_grad=True)  # float64
    c = st.tensor(rng.standard_normal(4) + 1j * rng.standard_normal(4), requires_grad=True)  # complex128
    graphs = [
        lambda: a + b,
        lambda: (a * b).exp() / (b - a).abs().clamp(min=0.5),
        lambda: st.where(a > 0, a, b) ** 2,
        lambda: (a * c).abs() + (b @ a.transpose(1, 2).double()).sum(),
        lambda: (a.sum(0, keepdim=True) * b).logsumexp(-1),
    ]
    for i, f in enumerate(graphs):
        out = f()
        ins = [t for t in (a, b, c) if t is not None]
        cot = st.tensor(rng.standard_normal(tuple(out.shape)), dtype=out.dtype)
        first = st.autograd.grad(out, ins, cot, retain_graph=True, allow_unused=True)
        second = st.autograd.grad(out, ins, cot, create_graph=True, allow_unused=True)
        for x, g1, g2 in zip(ins, first, second):
            assert (g1 is None) == (g2 is None), i
            if g1 is not None:
                assert g1.dtype == g2.dtype == x.dtype and g1.shape == x.shape, i
                np.testing.assert_array_equal(g1.detach().numpy(), g2.detach().numpy(), err_msg=str(i))


def _pieces_program(lib, x):
    """A gradient made of many views' pieces and a tensor used several times (NOTE [accumulation buffer])."""
    q, k, v = x.split(4, dim=2)
    a, b = x.chunk(2, dim=1)
    u = x.unbind(0)
    return ((q * 2).sum() + (k ** 2).sum() + v.exp().sum() + a.sin().sum() + (u[1] * 3).sum() + x[:, 1:3].sum()
            + (x * x).sum() + x.narrow(2, 5, 3).tanh().sum())


def test_view_pieces_accumulate_into_one_buffer_with_the_graph_building_bits():
    """split/chunk/unbind (one concatenation each) and slice gradients go into one buffer per input in a first-order backward: its values are
    torch's, its bits those of the graph-building backward (which sums new tensors), and the view vjp's
    zero-filled buffer is made once, not once per piece."""
    from shapetorch.ops import indexing

    data = np.random.default_rng(3).standard_normal((2, 5, 12))
    tx = torch.tensor(data, requires_grad=True)
    _pieces_program(torch, tx).backward()
    grads = []
    calls = [0]
    kernel = indexing._INDEX_BACKWARD.kernels["cpu"]

    def counting(*args, **kwargs):
        calls[0] += 1
        return kernel(*args, **kwargs)

    indexing._INDEX_BACKWARD.kernels["cpu"] = counting
    try:
        for create_graph in (False, True):
            x = st.tensor(data, requires_grad=True)
            calls[0] = 0
            _pieces_program(st, x).backward(create_graph=create_graph)
            grads.append(arr(x.grad))
            if not create_graph:
                assert calls[0] == 1, calls[0]  # one view vjp's buffer; the other pieces add into it
            else:
                # (each slice its own: the slice, narrow; split, chunk and unbind concatenate their pieces' gradients,
                # NOTE [split node])
                assert calls[0] == 2, calls[0]
    finally:
        indexing._INDEX_BACKWARD.kernels["cpu"] = kernel
    np.testing.assert_allclose(grads[0], arr(tx.grad), rtol=1e-12)
    assert np.array_equal(grads[0], grads[1])
    # autograd.grad takes the same buffers
    x = st.tensor(data, requires_grad=True)
    (g,) = st.autograd.grad(_pieces_program(st, x), x)
    assert np.array_equal(arr(g), grads[0])


def test_broadcast_gradients_summed_back_as_torchs_first_order_and_graph_building():
    """sum_to: a gradient broadcast over leading dims only (a bias) is summed without a view after it when no graph is
    built; with one (``create_graph``) the result is torch's sum-then-view, node for node. Values, shapes and nodes
    against torch, for leading dims alone, size-1 dims alone and both."""
    got = {}
    for lib in (st, torch):
        rng = np.random.default_rng(0)
        x = lib.tensor(rng.normal(size=(2, 4, 3)).astype(np.float32), requires_grad=True)
        params = [lib.tensor(rng.normal(size=s).astype(np.float32), requires_grad=True)
                  for s in ((3,), (1, 3), (4, 1), (2, 1, 1))]
        out = x
        for p in params:
            out = out * 2 + p
        first = [arr(g) for g in lib.autograd.grad((out * out).sum(), params, retain_graph=True)]
        built = lib.autograd.grad((out * out).sum(), params, create_graph=True, retain_graph=True)
        names = [g.grad_fn.name() for g in built]
        second = arr(lib.autograd.grad(sum((g * g).sum() for g in built), x, retain_graph=True)[0])
        (out * out).sum().backward()
        got[lib.__name__] = (first, [arr(p.grad) for p in params], names, second)
    ours, theirs = got["shapetorch"], got["torch"]
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert ours[2] == theirs[2]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5, atol=1e-4)


def test_leaves_sharing_one_gradient_get_grads_of_their_own():
    """The walk's plain leaf (``_Walk.run``'s written-out ``step``) steals a gradient nothing else holds as
    ``.grad`` (NOTE [gradient stealing]); one gradient handed to two leaves (add's vjp gives g twice) is copied
    for each, so writing one ``.grad`` leaves the other alone, as in torch."""
    grads = {}
    for lib in (st, torch):
        a, b = (lib.tensor([1.0, 2.0, 3.0], requires_grad=True) for _ in range(2))
        w = lib.tensor([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]], requires_grad=True)
        x = lib.tensor([[1.0, 2.0]])
        ((a + b) * (x @ w)).sum().backward()
        a.grad.add_(1.0)
        grads[lib] = [arr(t.grad) for t in (a, b, w)]
    for ours, theirs in zip(grads[st], grads[torch]):
        np.testing.assert_array_equal(ours, theirs)
