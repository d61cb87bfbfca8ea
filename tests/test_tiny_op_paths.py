"""The tiny-op fast paths (issue 17's per-node and per-op work) give what the general paths give, as torch:
a NumPy scalar operand of the tensor's dtype, the view test of ``_view_of``, the seed of ``loss.backward()``,
the plain backward walk beside the hooked one, and a square's gradient."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import shapetorch as st

X = [[0.5, -1.25], [3.0, 0.75]]
OPS = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
       "pow": operator.pow}


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("scalar_type", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(OPS))
def test_numpy_scalar_operand_as_torch(name: str, scalar_type: type, dtype: str) -> None:
    """A floating tensor with a NumPy scalar (of its own dtype: the fast path; of another: the general one)."""
    op = OPS[name]
    for value in (2.0, -0.5, 0.0):
        ours = op(st.tensor(X, dtype=getattr(st, dtype)), scalar_type(value))
        theirs = op(torch.tensor(X, dtype=getattr(torch, dtype)), scalar_type(value))
        where = f"{name} {dtype} {scalar_type.__name__}({value})"
        assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], where
        np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64),
                                   rtol=1e-3 if dtype == "float16" else 1e-6, equal_nan=True, err_msg=where)


VIEWS = {
    "reshape": lambda x: x.reshape(2, 6),
    "reshape of a transpose": lambda x: x.t().reshape(12),
    "reshape of a slice": lambda x: x[1:].reshape(8),
    "reshape of a column slice": lambda x: x[:, 1:].reshape(-1),
    "t": lambda x: x.t(),
    "mT": lambda x: x.mT,
    "expand": lambda x: x[:1].expand(5, 4),
    "view": lambda x: x.view(4, 3),
    "flatten of a transpose": lambda x: x.t().flatten(),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_and_copies_as_torch(name: str) -> None:
    """``_view_of`` tells a view from a copy by NumPy's ``base`` first: the verdict, and where a write lands,
    are torch's."""
    fn = VIEWS[name]
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    ours_base, theirs_base = st.tensor(data), torch.tensor(data)
    ours, theirs = fn(ours_base), fn(theirs_base)
    assert (ours._base is not None) == theirs._is_view(), name
    ours.fill_(7.0)  # lands in the base through a view, not through a copy
    theirs.fill_(7.0)
    np.testing.assert_array_equal(ours_base.numpy(), theirs_base.numpy(), err_msg=name)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_scalar_loss_backward_as_torch(shape: tuple[int, ...], dtype: str) -> None:
    """``loss.backward()`` of a one-element loss (the seeded fast path): gradients, dtype, accumulation over
    two backward calls with ``retain_graph``, and the error of a third without it."""
    data = np.array(X, dtype=np.float32)
    grads = []
    for lib in (st, torch):
        a = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        loss = (a * a + a).sum().reshape(shape)
        loss.backward(retain_graph=True)
        loss.backward()
        with pytest.raises(RuntimeError):
            loss.backward()
        grads.append(a.grad)
    ours, theirs = grads
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64), rtol=1e-3)


def test_a_loss_that_needs_no_grad_is_refused_as_torch() -> None:
    for lib in (st, torch):
        with pytest.raises(RuntimeError):
            lib.ones((), requires_grad=False).backward()


def test_the_plain_walk_and_the_hooked_walk_agree() -> None:
    """The plain walk (no hooks) and the general step (a tensor hook on a leaf, a node pre-hook) give the
    same gradients, and the hooks run: a leaf hook's returned gradient is the one accumulated."""
    data = np.array(X, dtype=np.float32)

    def run(hooked: bool) -> tuple[np.ndarray, np.ndarray, list[str]]:
        a = st.tensor(data, requires_grad=True)
        b = st.tensor(data + 1, requires_grad=True)
        seen: list[str] = []
        y = (a * b + a).exp()
        if hooked:
            a.register_hook(lambda g: (seen.append("leaf"), g * 2)[1])
            y.grad_fn.register_prehook(lambda grads: seen.append("node"))
        (y @ b).sum().backward()
        return a.grad.numpy(), b.grad.numpy(), seen

    ga, gb, seen = run(False)
    ha, hb, hooked_seen = run(True)
    assert seen == [] and sorted(hooked_seen) == ["leaf", "node"]
    np.testing.assert_array_equal(hb, gb)
    np.testing.assert_array_equal(ha, ga * 2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_square_gradient_bit_for_bit_as_torch(dtype: str) -> None:
    """``x ** 2``'s gradient (through a NumPy-scalar exponent on the scalar fast path): torch's bits."""
    data = np.random.default_rng(0).standard_normal((3, 5))
    grads = []
    for lib in (st, torch):
        x = lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)
        (x ** 2 * 0.37).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[0], grads[1])


def test_sizes_and_dims_take_ints_only_after_the_same_call_with_ints() -> None:
    """The views' sizes and the reductions' dims are tested one type at a time and their rules' verdicts cached: a
    bool or a float hashes as the int it equals, so after the call with ints has filled the cache the same call with
    a bool or a float must still be refused as torch refuses it (a TypeError), and NumPy ints still taken."""
    for lib in (torch, st):
        x = lib.ones(2, 8)
        assert tuple(x.reshape(1, 16).shape) == tuple(x.reshape(np.int64(1), 16).shape) == (1, 16)
        assert tuple(x.permute(1, 0).shape) == (8, 2) and tuple(x.sum((1,)).shape) == (2,)
        for call in (lambda: x.reshape(True, 16), lambda: x.reshape(1.0, 16), lambda: x.view((True, 16)),
                     lambda: x.permute(True, 0), lambda: x.reshape(1, 16).expand(True, 16), lambda: x.sum((True,)),
                     lambda: x.sum([1.0])):
            with pytest.raises(TypeError):
                call()


VIEW_OPS = {"reshape": lambda x: x.reshape(3, 2), "permute": lambda x: x.permute(1, 0), "t": lambda x: x.t(),
            "mT": lambda x: x.mT, "transpose": lambda x: x.transpose(0, 1)}


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode", "enable_grad"])
@pytest.mark.parametrize("name", sorted(VIEW_OPS))
def test_a_view_made_without_grad_is_written_in_place_as_torchs(name, mode):
    """A reshape or transpose of a leaf that requires grad, made under ``no_grad`` or ``inference_mode`` (the views'
    untracked shortcut: NOTE [untracked view]), remembers how it was made: an in-place write with grad mode on is
    refused with torch's error class, or allowed, as torch's."""
    outcome = {}
    for lib in (st, torch):
        x = lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
        with getattr(lib, mode)():
            v = VIEW_OPS[name](x)
        try:
            v.mul_(2.0)
            outcome[lib] = ("ok", v.detach().numpy().tolist())
        except RuntimeError as e:
            outcome[lib] = ("RuntimeError", "no_grad" in str(e) or "inference" in str(e).lower())
    assert outcome[st] == outcome[torch]
