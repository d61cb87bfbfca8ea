"""Custom ``autograd.Function``: the reference's Exp, the save_for_backward rules of its documentation
(each breach an error), saved_tensors' in-place check, ctx features, wrong gradients, forward AD."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch import autograd
from shapetorch.autograd import Function, once_differentiable


def make_exp(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    return Exp


def test_reference_exp_function_matches_torch():
    out = {}
    for lib in (st, torch):
        Exp = make_exp(lib)
        x = lib.tensor([0.0, 1.0, -1.0], dtype=lib.float64, requires_grad=True)
        y = Exp.apply(x)
        (y * y).sum().backward()
        out[lib.__name__] = (y.grad_fn.name(), x.grad.tolist())
    assert out["shapetorch"] == out["torch"]
    x = st.tensor([0.5, -0.3], dtype=st.float64, requires_grad=True)
    assert autograd.gradcheck(make_exp(st).apply, (x,))
    assert autograd.gradgradcheck(make_exp(st).apply, (x,))


class Func(Function):
    """The seed's save_for_backward example, with once_differentiable."""

    @staticmethod
    def forward(ctx, x, y, z):
        w = x * z
        out = x * y + y * z + w * y
        ctx.save_for_backward(x, y, w, out)
        ctx.z = z  # z is not a tensor
        return out

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        x, y, w, out = ctx.saved_tensors
        z = ctx.z
        gx = grad_out * (y + y * z)
        gy = grad_out * (x + z + w)
        gz = None
        return gx, gy, gz


def test_save_for_backward_doc_example_and_once_differentiable():
    a = st.tensor(1.0, requires_grad=True, dtype=st.float64)
    b = st.tensor(2.0, requires_grad=True, dtype=st.float64)
    d = Func.apply(a, b, 4)
    assert d.item() == 1 * 2 + 2 * 4 + 4 * 2
    ga, gb = autograd.grad(d, (a, b), create_graph=True)
    assert (ga.item(), gb.item()) == (2 + 8, 1 + 4 + 4)
    assert not ga.requires_grad  # as torch: the backward ran without recording, grad_out needed no grad
    ga, gb = autograd.grad(d, (a, b), st.ones((), dtype=st.float64, requires_grad=True), create_graph=True)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked with "
                                           "@once_differentiable"):
        ga.backward()


def test_save_for_backward_rules_each_breach_is_an_error():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_backward(x)
            return x * 2

    class NotTensor(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, 3)
            return x * 2

    class InBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            ctx.save_for_backward(g)
            return g

    class NoneIsFine(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(None, x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            none, x = ctx.saved_tensors
            assert none is None
            return g * 2

    x = st.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="at most once"):
        Twice.apply(x)
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type int"):
        NotTensor.apply(x)
    with pytest.raises(RuntimeError, match="only be called from forward"):
        InBackward.apply(x).sum().backward()
    NoneIsFine.apply(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_saved_tensors_are_checked_for_in_place_changes():
    for lib in (st, torch):
        Exp = make_exp(lib)
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Exp.apply(x)
        y.mul_(2)
        with pytest.raises(RuntimeError, match="is at version 1; expected version 0 instead"):
            y.sum().backward()


def test_saved_tensors_are_freed_after_backward():
    Exp = make_exp(st)
    x = st.ones(2, requires_grad=True)
    y = Exp.apply(x)
    s = y.sum()
    s.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.grad_fn.saved_tensors  # noqa: B018


def test_wrong_number_or_shape_of_gradients_is_a_shapetorch_error():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g, g

    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return st.ones(5)

    class Broadcast(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            return st.ones(4, 3)  # summed back to (3,), as torch does

    x = st.ones(3, requires_grad=True)
    with pytest.raises(st.ShapetorchError) as e:
        TooMany.apply(x).sum().backward()
    assert e.value.code == "autograd_gradient_mismatch_error"
    assert "returned an incorrect number of gradients (expected 1, got 2)" in str(e.value)
    with pytest.raises(st.AutogradError, match="invalid gradient at index 0 - got \\[5\\] but expected shape "
                                                "compatible with \\[3\\]") as e:
        BadShape.apply(x).backward()
    assert e.value.code == "autograd_gradient_mismatch_error" and isinstance(e.value, RuntimeError)
    Broadcast.apply(x).backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_ctx_features_match_torch():
    def prog(lib):
        log = {}

        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                log["needs"] = ctx.needs_input_grad
                idx = x.argsort() if hasattr(x, "argsort") else None
                values = x * 1
                ctx.mark_non_differentiable(idx) if idx is not None else None
                ctx.set_materialize_grads(False)
                ctx.k = k
                return values, idx

            @staticmethod
            def backward(ctx, g, g_idx):
                log["g_idx"] = g_idx
                return g * ctx.k, None

        x = lib.tensor([3.0, 1.0, 2.0], requires_grad=True)
        v, _ = Sort.apply(x, 2.0)
        v.sum().backward()
        return log["needs"], log["g_idx"], x.grad.tolist()

    s, t = prog(st), prog(torch)
    assert s == t


def test_mark_dirty_and_setup_context_style():
    def prog(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, y):
                return x * y

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.save_for_backward(*inputs)

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y, g * x

        a = lib.tensor([1.0, 2.0], requires_grad=True)
        h = a * 2
        out = AddOne.apply(h)
        r = Mul.apply(out, a)
        r.sum().backward()
        return out is h, h.grad_fn.name(), h._version, a.grad.tolist()

    assert prog(st) == prog(torch)
    leaf = st.ones(2, requires_grad=True)

    class Dirty(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in an in-place operation"):
        Dirty.apply(leaf)


def test_returning_an_input_makes_a_view_and_non_tensor_args():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x, scale):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3, None

    x = st.ones(2, requires_grad=True)
    y = Ident.apply(x, 1.0)
    assert y is not x and y.grad_fn.name() == "IdentBackward"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    with st.no_grad():
        assert not Ident.apply(x, 1.0).requires_grad


def test_function_jvp_in_forward_mode():
    import shapetorch.autograd.forward_ad as fwAD

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 2 * x * t

    with fwAD.dual_level():
        d = fwAD.make_dual(st.tensor([1.0, 3.0]), st.tensor([1.0, 0.5]))
        out = Square.apply(d)
        assert fwAD.unpack_dual(out).tangent.tolist() == [2.0, 3.0]


def test_gradcheck_of_a_wrong_backward_fails():
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    x = st.tensor(np.array([0.5, 1.5]), requires_grad=True)
    assert not autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        autograd.gradcheck(Wrong.apply, (x,))
