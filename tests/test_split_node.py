"""split, split_with_sizes, chunk and unbind record one node for all their pieces, as torch (NOTE [split node] in
``ops/joining.py``): its name, values and gradients with gradients reaching all, some or none of the pieces, double
backward, forward-mode AD, and torch's verdict on an in-place write into a piece. Against torch on the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
import shapetorch.autograd.forward_ad as st_fwad

RNG = np.random.default_rng(0)
A = RNG.normal(size=(4, 6, 5))

# (name, call, weights of the pieces' losses: None = that piece takes no part in the loss)
CASES = {
    "split": lambda lib, y: y.split(2, dim=1),
    "split_uneven": lambda lib, y: y.split(4, dim=1),
    "split_neg_dim": lambda lib, y: lib.split(y, 2, dim=-1),
    "split_sizes": lambda lib, y: y.split([1, 0, 5], dim=1),
    "split_with_sizes": lambda lib, y: lib.split_with_sizes(y, [2, 4], dim=1),
    "split_whole": lambda lib, y: y.split(7, dim=1),
    "chunk": lambda lib, y: y.chunk(3, dim=-2),
    "chunk_uneven": lambda lib, y: y.chunk(4, dim=2),
    "unbind": lambda lib, y: y.unbind(1),
    "unbind_neg": lambda lib, y: lib.unbind(y, -1),
}
NAMES = {"split": "SplitBackward0", "split_uneven": "SplitBackward0", "split_neg_dim": "SplitBackward0",
         "split_sizes": "SplitWithSizesBackward0", "split_with_sizes": "SplitWithSizesBackward0",
         "split_whole": "SplitBackward0", "chunk": "SplitBackward0", "chunk_uneven": "SplitBackward0",
         "unbind": "UnbindBackward0", "unbind_neg": "UnbindBackward0"}


def _run(lib, case, which, transpose=False):
    """Forward, the loss over the pieces in ``which`` ('all', 'some', 'none' but one piece kept off the loss), and
    the input's gradient."""
    x = lib.tensor(A, requires_grad=True)
    y = (x * 1.5).transpose(0, 2).transpose(0, 2) if not transpose else (x * 1.5).permute(2, 1, 0)
    pieces = CASES[case](lib, y)
    loss = None
    for i, p in enumerate(pieces):
        if which == "all" or (which == "some" and i % 2 == 0):
            term = (p * (i + 1.25)).pow(2).sum()
            loss = term if loss is None else loss + term
    if loss is None:  # no piece in the loss: the graph reaches the input another way only
        loss = (y * 2).sum()
    loss.backward()
    return pieces, x.grad


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("which", ["all", "some", "none"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_values_gradients_and_one_node(case, which, transpose):
    ours, g = _run(st, case, which, transpose)
    theirs, tg = _run(torch, case, which, transpose)
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        assert tuple(o.shape) == tuple(t.shape)
        np.testing.assert_allclose(o.detach().numpy(), t.detach().numpy(), rtol=1e-12)
        assert o.grad_fn.name() == t.grad_fn.name() == NAMES[case]
        assert o.output_nr == t.output_nr
        assert o._base is not None  # a view of the input, as torch's
    assert len({id(o.grad_fn) for o in ours}) == 1
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-12)


def test_pieces_are_views_of_the_input():
    x = st.tensor(A.copy())
    a, b, c = x.split(2, dim=1)
    b.mul_(0)  # no grad in play: allowed, as in torch, and written through to the input
    assert float(x[:, 2:4].abs().sum()) == 0.0
    assert float(x[:, :2].abs().sum()) > 0
    assert x._version == b._version == a._version == 1


def test_backward_concatenates_once_with_zeros_only_where_needed():
    """One node whose gradient for the input is one tensor: the pieces that got no gradient are zeros."""
    x = st.tensor(A, requires_grad=True)
    y = x * 1.0
    a, b, c = y.split(2, dim=1)
    node = a.grad_fn
    ga = st.ones_like(a)
    gx = node(ga, None, None)
    expect = np.zeros_like(A)
    expect[:, :2] = 1
    np.testing.assert_array_equal(gx.numpy(), expect)
    assert node.next_functions[0][0] is y.grad_fn
    assert node(None, None, None) is None  # no piece has a gradient: no gradient and no zeros


@pytest.mark.parametrize("case", ["split", "split_sizes", "chunk", "unbind"])
def test_double_backward(case):
    res = []
    for lib in (st, torch):
        x = lib.tensor(A, requires_grad=True)
        pieces = CASES[case](lib, x * x)
        loss = sum((p.sin() * (i + 1)).sum() for i, p in enumerate(pieces) if i != 1)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    for ours, theirs in zip(*res):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", ["split", "split_sizes", "chunk_uneven", "unbind_neg"])
def test_forward_mode(case):
    t = RNG.normal(size=A.shape)
    res = []
    for lib, fwad in ((st, st_fwad), (torch, torch.autograd.forward_ad)):
        with fwad.dual_level():
            x = fwad.make_dual(lib.tensor(A), lib.tensor(t))
            pieces = CASES[case](lib, x.exp())
            res.append([(fwad.unpack_dual(p).primal.numpy(), fwad.unpack_dual(p).tangent.numpy()) for p in pieces])
    for (p, tp), (q, tq) in zip(*res):
        np.testing.assert_allclose(p, q, rtol=1e-12)
        np.testing.assert_allclose(tp, tq, rtol=1e-12)


@pytest.mark.parametrize("case", ["split", "split_with_sizes", "chunk", "unbind"])
@pytest.mark.parametrize("leaf", [False, True])
def test_inplace_on_a_piece_is_refused_as_torch(case, leaf):
    messages = []
    for lib, cls in ((st, st.AutogradError), (torch, RuntimeError)):
        x = lib.tensor(A, requires_grad=True)
        pieces = CASES[case](lib, x if leaf else x * 1)
        with pytest.raises(cls, match="output of a function that returns multiple views") as e:
            pieces[1].mul_(2)
        messages.append(str(e.value))
        if lib is st:
            assert isinstance(e.value, RuntimeError) and e.value.code == "autograd_error_custom_view_inplace"
        with pytest.raises(cls, match="returns multiple views"):  # a view of a piece too (torch: "Output 0 of Select")
            pieces[0][0].add_(1)
    assert messages[0].split(" is a view")[0] == messages[1].split(" is a view")[0]  # "Output 1 of Split"


def test_inplace_allowed_where_torch_allows_it():
    """No grad in play (the input does not require grad, or grad mode is off at the write): torch writes."""
    for lib in (st, torch):
        x = lib.tensor(A.copy())
        x.split(2, dim=1)[0].mul_(2)
        y = lib.tensor(A.copy(), requires_grad=True) * 1
        with lib.no_grad():
            y.unbind(0)[1].zero_()
        assert float(y[1].abs().sum()) == 0.0


def test_input_written_after_the_split_keeps_the_backward():
    """torch's SplitBackward0 saves no tensor: writing into the input after the pieces were used (in an op that
    saves nothing) leaves their gradient as it was."""
    res = []
    for lib in (st, torch):
        x = lib.tensor(A, requires_grad=True)
        y = x * 2
        a, b, c = y.split(2, dim=1)
        loss = a.sum() + (c * 3).sum()
        y.mul_(5)
        loss.backward()
        res.append(x.grad.numpy())
    np.testing.assert_array_equal(*res)


def test_hooks_retain_grad_and_autograd_grad_of_a_piece():
    res = []
    for lib in (st, torch):
        x = lib.tensor(A, requires_grad=True)
        a, b, c = (x * 1).chunk(3, dim=1)
        b.retain_grad()
        seen = []
        c.register_hook(lambda g: seen.append(g.sum().item()) or g * 2)
        loss = (a * b).sum() + (c * c).sum()
        (gb,) = lib.autograd.grad(loss, b, retain_graph=True)
        loss.backward()
        res.append((gb.numpy(), b.grad.numpy(), x.grad.numpy(), seen))
    (gb, bg, xg, seen), (tgb, tbg, txg, tseen) = res
    np.testing.assert_allclose(gb, tgb)
    np.testing.assert_allclose(bg, tbg)
    np.testing.assert_allclose(xg, txg)
    np.testing.assert_allclose(seen, tseen)


def test_tensor_split_family_stays_slices_as_torch():
    for lib in (st, torch):
        for cut in (lambda x: x.tensor_split(3, dim=1), lambda x: x.hsplit(2), lambda x: x.vsplit([1, 3]),
                    lambda x: x.dsplit(5)):
            pieces = cut(lib.tensor(A, requires_grad=True) * 1)
            assert {p.grad_fn.name() for p in pieces} == {"SliceBackward0"}
            pieces[0].mul_(1)  # torch's slices may be written in place


def test_profiler_inference_mode_and_no_grad_see_the_call():
    """What the engine's slow path does for a one-output call, the split does for each piece."""
    x = st.tensor(A, requires_grad=True)
    with st.autograd.profiler.profile() as prof:
        (x * 1).split(2, dim=1)[0].sum().backward()
    names = {e.name for e in prof.function_events}
    assert "aten::split_with_sizes" in names and "aten::cat" in names
    with st.inference_mode():
        pieces = st.tensor(A).unbind(0)
    assert all(p.is_inference() for p in pieces)
    with st.no_grad():
        pieces = x.split(3, dim=1)
    # torch's views of a tensor that requires grad report requires_grad even when made under no_grad, with no node
    assert all(p.grad_fn is None and p.requires_grad for p in pieces)
