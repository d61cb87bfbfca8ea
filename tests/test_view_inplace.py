"""Views and in-place writes, against torch (NOTE [view + in-place] in the tensor module): a view whose storage is
written in place (through its base or another view) takes a new grad_fn, AsStridedBackward0 of its base's current
history, the next time it is read; a write into a view records its base's CopySlices for any layout of the base;
views made under no_grad, pieces of unbind/split refuse as torch's; detach() and .data never regenerate. Each
program runs on shapetorch and torch alike; the gradients, grad_fn names, requires_grad flags and exceptions are
compared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs

import shapetorch as st

X = np.arange(1.0, 7.0).reshape(2, 3)  # (values that differ, so a misplaced gradient shows)


def _x(lib: Any, shape: tuple[int, ...] = (2, 3)) -> Any:
    n = int(np.prod(shape))
    return lib.tensor(np.arange(1.0, n + 1.0).reshape(shape), requires_grad=True)


def _w(lib: Any, shape: tuple[int, ...]) -> Any:
    """Weights of a loss (distinct values, so that which element gets which gradient matters)."""
    n = int(np.prod(shape))
    return lib.tensor(((np.arange(n) % 5) + 1.0).reshape(shape))


def _num(t: Any) -> Any:
    return None if t is None else np.asarray(t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.numpy())


def _same(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif isinstance(theirs, torch.Tensor) or theirs is None:
        a, b = _num(ours), _num(theirs)
        assert (a is None) == (b is None), (ours, theirs)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)
    else:
        assert ours == theirs, (ours, theirs)


def both(program: Callable[[Any], Any]) -> Any:
    """Run ``program`` on shapetorch and torch; the results (or the exceptions' classes and messages) agree."""
    try:
        theirs = program(torch)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            program(st)
        assert str(e)[:50] in str(got.value), (str(got.value), str(e))  # (ours may name the op first)
        return got.value
    ours = program(st)
    _same(ours, theirs)
    return ours


def name(t: Any) -> str | None:
    return None if t.grad_fn is None else t.grad_fn.name()


# -- the cases of the issue --------------------------------------------------------------------------------------


def test_base_written_then_slice_read() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a = y[:, :2]
        y.mul_(2)
        (a * _w(L, (2, 2))).sum().backward()
        return x.grad, name(a)

    assert both(p)[1] == "AsStridedBackward0"


def test_view_written_other_view_read() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a, b = y[0], y[1]
        a.mul_(3)
        names = [name(b), name(a), name(y)]
        (b.sum() + (a * _w(L, (3,))).sum()).backward()
        return x.grad, names

    assert both(p)[1] == ["AsStridedBackward0", "AsStridedBackward0", "torch::autograd::CopySlices"]


def test_copy_into_a_base_that_did_not_require_grad() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        y = L.zeros(3)
        a = y[:2]
        before = a.requires_grad
        y.copy_(x)
        flags = [before, a.requires_grad, a.is_leaf, name(a)]
        (a * _w(L, (2,))).sum().backward()
        return x.grad, flags

    assert both(p)[1] == [False, True, False, "AsStridedBackward0"]


def test_graph_recorded_before_the_write_keeps_the_old_node() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        a = y[:2]
        s = (a * _w(L, (2,))).sum()
        y.mul_(2)
        s.backward()
        return x.grad

    both(p)


def test_write_into_a_view_of_an_f_ordered_base() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3, 2))
        y = x.t() * 1  # elementwise results keep their input's layout: y is not contiguous
        contiguous = y.is_contiguous()
        y[0].mul_(2)
        (y * _w(L, (2, 3))).sum().backward()
        return x.grad, contiguous, name(y)

    assert both(p)[1] is False


@pytest.mark.parametrize("layout", ["offset", "fortran", "offset fortran"])
def test_write_into_a_view_of_a_base_with_an_offset_or_f_order(layout: str) -> None:
    def p(L: Any) -> Any:
        buf = np.zeros(8)
        arr = buf[2:].reshape(2, 3) if "offset" in layout else buf[:6].reshape(2, 3)
        if "fortran" in layout:
            arr = buf[2:].reshape(3, 2).T if "offset" in layout else buf[:6].reshape(3, 2).T
        y = L.from_numpy(arr)  # a tensor of its own over that memory (no view of another tensor)
        x = _x(L)
        y.copy_(x * 1)
        y[:, 1].mul_(x[0, 0])
        y[1].add_(x[1] * 2)
        a = y[0, 1:]
        (y * _w(L, (2, 3))).sum().backward(retain_graph=True)
        (a * _w(L, (2,))).sum().backward()
        return x.grad, name(y), name(a)

    both(p)


# -- chains of views ----------------------------------------------------------------------------------------------


def test_view_of_a_view_written_then_base_and_sibling_read() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3, 4))
        y = x * 1
        b = y[1]
        a = y.t()[1:][:, ::2]  # transpose, then slices
        a.mul_(_w(L, (3, 2)) * 0 + 3)
        (y * _w(L, (3, 4))).sum().backward(retain_graph=True)
        (b * b).sum().backward()
        return x.grad, name(b)

    both(p)


def test_diagonal_written() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3, 3))
        y = x * 1
        d = y.diagonal()
        row = y[2]
        d.mul_(_x(L, (3,)).detach())
        (row * _w(L, (3,))).sum().backward(retain_graph=True)
        (y * _w(L, (3, 3))).sum().backward()
        return x.grad

    both(p)


def test_expand_refused_as_torch_and_expanded_view_regenerated() -> None:
    def refused(L: Any) -> Any:
        y = _x(L, (3,)) * 1
        y.expand(2, 3).mul_(2)

    both(refused)

    def read(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        e = y.expand(2, 3)
        y.mul_(2)
        (e * _w(L, (2, 3))).sum().backward()
        return x.grad, name(e)

    both(read)


def test_write_into_a_diagonal_of_an_expanded_view() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a = y.expand(2, 2, 3).diagonal(0, 0, 1)  # no element twice: writable, as torch's
        a.mul_(2.5)
        (y * _w(L, (2, 3))).sum().backward()
        return x.grad, y.detach()

    both(p)


@pytest.mark.parametrize("split", ["unbind", "split", "chunk"])
def test_pieces_of_unbind_and_split_refuse_after_their_base_is_written(split: str) -> None:
    def p(L: Any) -> Any:
        y = _x(L) * 1
        pieces = y.unbind() if split == "unbind" else y.split(1) if split == "split" else y.chunk(2)
        y.mul_(2)
        return pieces[0].sum()

    err = both(p)
    assert isinstance(err, st.AutogradError) and err.code == "autograd_error_view_mode_inplace"


def test_pieces_written_directly_refuse() -> None:
    def p(L: Any) -> Any:
        y = _x(L) * 1
        y.unbind()[1].mul_(2)

    both(p)


def test_view_used_twice_after_the_base_is_written() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a = y[:, 1:]
        y.add_(1)
        same = a.grad_fn is a.grad_fn
        (a.sum() + (a * a).sum()).backward()
        return x.grad, same

    assert both(p)[1] is True


def test_retain_graph_double_backward() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a = y[1]
        y.mul_(3)
        s = (a * a).sum()
        s.backward(retain_graph=True)
        s.backward()
        return x.grad

    both(p)


def test_create_graph_through_a_regenerated_view() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        a = y[0]
        y.mul_(y.detach() + 1)
        (g,) = L.autograd.grad((a ** 3).sum(), x, create_graph=True)
        g.sum().backward()
        return x.grad

    both(p)


def test_several_inplace_ops_in_a_row() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3, 3))
        y = x * 1
        a, b = y[0], y[:, 1]
        a.mul_(2)
        a.add_(x[2])
        b.mul_(b.detach() + 1)
        y[1:, :2].zero_()
        y.exp_()
        loss = (a * _w(L, (3,))).sum() + (b * b).sum() + (y * _w(L, (3, 3))).sum()
        loss.backward()
        return x.grad, [name(a), name(b), name(y)]

    both(p)


def test_retain_grad_moves_to_the_regenerated_node() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        a = y[:2]
        a.retain_grad()
        y.mul_(2)
        (a * _w(L, (2,))).sum().backward()
        return x.grad, a.grad

    both(p)


def test_stale_view_as_backward_root_and_autograd_grad_argument() -> None:
    def root(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        a = y[:2]
        y.mul_(2)
        a.backward(_w(L, (2,)))
        return x.grad

    both(root)

    def grads(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        a = y[:2]
        y.mul_(2)
        of_y = L.autograd.grad((a * _w(L, (2,))).sum(), y, retain_graph=True)
        of_a = L.autograd.grad((y * _w(L, (3,))).sum(), a, allow_unused=True)
        return of_y, of_a

    both(grads)


def test_complex_base_written_through_real_and_imag() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        c = L.complex(x * 1, x * 2)
        c.imag.mul_(3)
        r = c.real
        c.real.add_(x)
        loss = (L.view_as_real(c) ** 2).sum() + (r * _w(L, (2, 3))).sum()
        loss.backward()
        return x.grad

    both(p)


# -- views made under no_grad, detach() and .data -------------------------------------------------------------------


def test_no_grad_view_of_a_written_base_refuses() -> None:
    def p(L: Any) -> Any:
        y = _x(L) * 1
        with L.no_grad():
            a = y[:, :2]
        flag = a.requires_grad
        y.mul_(2)
        assert a.requires_grad == flag  # (read without regenerating, as torch's)
        return a.sum()

    err = both(p)
    assert isinstance(err, st.AutogradError) and err.code == "autograd_error_view_mode_inplace"


def test_no_grad_view_of_a_base_copied_into_refuses_at_grad_fn() -> None:
    def p(L: Any) -> Any:
        y = L.zeros(3)
        with L.no_grad():
            a = y[:2]
        y.copy_(_x(L, (3,)))
        assert a.requires_grad
        return a.grad_fn

    both(p)


def test_no_grad_view_written_with_grad_mode_refuses() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        with L.no_grad():
            a = x[:2]
        assert a.requires_grad and a.grad_fn is None
        a.mul_(2)

    both(p)

    def q(L: Any) -> Any:
        y = L.zeros(3)
        with L.no_grad():
            a = y[:2]
        a.copy_(_x(L, (2,)))

    both(q)


def test_no_grad_view_written_under_no_grad_is_fine() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        with L.no_grad():
            a = y[:2]
            y.mul_(2)
            a.add_(1)
        (y * _w(L, (3,))).sum().backward()
        return x.grad, y.tolist()

    both(p)


def test_base_written_under_no_grad_then_view_read() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        y = x * 1
        a = y[1:]
        with L.no_grad():
            y.mul_(2)
        (a * _w(L, (2,))).sum().backward()
        return x.grad, name(a)

    both(p)


def test_detach_and_data_never_regenerate() -> None:
    def p(L: Any) -> Any:
        x = _x(L)
        y = x * 1
        d, e = y.detach(), y.data
        v = y.detach()[0]
        y.mul_(2)
        flags = [d.grad_fn is None, d.requires_grad, e.grad_fn is None, e.requires_grad, v.requires_grad, name(v)]
        (d * x).sum().backward()
        return x.grad, flags

    assert both(p)[1] == [True, False, True, False, False, None]


def test_write_into_a_view_of_a_detached_alias_stays_off_the_original_graph() -> None:
    def p(L: Any) -> Any:
        x = _x(L, (3,))
        w = _x(L, (2,))
        y = x * 1
        d = y.detach()
        d[:2].copy_(w * 3)
        (d * _w(L, (3,))).sum().backward(retain_graph=True)
        (y * _w(L, (3,))).sum().backward()
        return x.grad, w.grad, name(d)

    both(p)


# -- random programs -----------------------------------------------------------------------------------------------

VIEW_OPS = ("select", "slice", "transpose", "diagonal", "unsqueeze", "narrow", "expand")
WRITES = ("mul_", "add_", "copy_", "zero_", "fill_", "exp_", "setitem")


def _view(L: Any, t: Any, op: tuple[Any, ...]) -> Any:
    kind, a, b = op
    nd = t.dim()
    if kind == "select" and nd and t.shape[a % nd]:
        return t.select(a % nd, b % t.shape[a % nd])
    if kind == "slice" and nd:
        d = a % nd
        return t.narrow(d, 0, t.shape[d]) if t.shape[d] < 2 else t[(slice(None),) * d + (slice(b % 2, None, 1 + a % 2),)]
    if kind == "transpose" and nd >= 2:
        return t.transpose(a % nd, b % nd)
    if kind == "diagonal" and nd >= 2:
        return t.diagonal(0, a % nd, (a + 1) % nd)
    if kind == "unsqueeze":
        return t.unsqueeze(a % (nd + 1))
    if kind == "narrow" and nd and t.shape[a % nd]:
        d = a % nd
        return t.narrow(d, b % t.shape[d], t.shape[d] - b % t.shape[d])
    if kind == "expand":
        return t.expand(2, *t.shape)
    return t


def _write(L: Any, t: Any, kind: str, w: Any) -> None:
    if kind == "mul_":
        t.mul_(2.5)
    elif kind == "add_":
        t.add_(w.reshape(-1)[: 1].reshape(()) * 1)
    elif kind == "copy_":
        t.copy_(w.reshape(-1)[0] * 3)
    elif kind == "zero_":
        t.zero_()
    elif kind == "fill_":
        t.fill_(1.5)
    elif kind == "exp_":
        t.mul_(0.1).exp_()
    else:
        t[...] = w.reshape(-1)[1] * 2


def _program(layout: str, chain_a: list[Any], chain_b: list[Any], target: str, write: str, reads: list[str],
             ) -> Callable[[Any], Any]:
    def p(L: Any) -> Any:
        x = _x(L, (3, 2) if layout == "t" else (2, 3))
        w = _x(L, (2,))
        if layout == "t":
            y = x.t() * 1
        elif layout == "offset":
            y = L.from_numpy(np.zeros(9)[3:].reshape(2, 3))
            y.copy_(x * 1)
        else:
            y = x * 1
        a = y
        for op in chain_a:
            a = _view(L, a, op)
        b = y
        for op in chain_b:
            b = _view(L, b, op)
        _write(L, {"base": y, "a": a, "b": b}[target], write, w)
        loss = 0
        for r in reads:
            t = {"base": y, "a": a, "b": b}[r]
            loss = loss + (t * _w(L, tuple(t.shape))).sum()
        if isinstance(loss, int):
            return None
        loss.backward()
        return x.grad, w.grad

    return p


_op = hs.tuples(hs.sampled_from(VIEW_OPS), hs.integers(0, 5), hs.integers(0, 5))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(layout=hs.sampled_from(["plain", "t", "offset"]), chain_a=hs.lists(_op, min_size=1, max_size=3),
       chain_b=hs.lists(_op, max_size=2), target=hs.sampled_from(["base", "a", "b"]), write=hs.sampled_from(WRITES),
       reads=hs.lists(hs.sampled_from(["base", "a", "b"]), min_size=1, max_size=3, unique=True))
def test_random_view_write_read_programs(layout: str, chain_a: list[Any], chain_b: list[Any], target: str,
                                         write: str, reads: list[str]) -> None:
    both(_program(layout, chain_a, chain_b, target, write, reads))
