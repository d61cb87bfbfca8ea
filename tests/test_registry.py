"""The extension API: a user-defined op with a shape rule, kernel and gradient works like a built-in."""

import numpy as np
import pytest
import torch

import shapetorch as st
from shapetorch._rules.broadcast import broadcast_pair


@pytest.fixture
def sq_dist():
    fn = st.register_op(
        "sq_dist_test", forward=lambda a, b: (a - b) ** 2, shape=lambda a, b: broadcast_pair(a, b, "sq_dist_test"),
        backward=lambda g, a, b, output: (2 * (a - b) * g, -2 * (a - b) * g),
    )
    yield fn
    from shapetorch._engine.primitives import PRIMS
    from shapetorch.ops._registry import CATEGORY, FUNCTIONS, METHODS

    PRIMS.pop("sq_dist_test")
    FUNCTIONS.pop("sq_dist_test")
    CATEGORY.pop("sq_dist_test")
    METHODS.pop("sq_dist_test")
    delattr(st.Tensor, "sq_dist_test")
    st.__dict__.pop("sq_dist_test", None)


def test_user_op_forward_backward_and_rule(sq_dist):
    a = st.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = st.tensor([0.5, -1.0])
    out = st.sq_dist_test(a, b)
    assert out.grad_fn.name() == "SqDistTestBackward0"
    out.sum().backward()
    ta = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    ((ta - torch.tensor([0.5, -1.0])) ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    assert a.sq_dist_test(b).shape == (2, 2)  # also a method
    with pytest.raises(st.ShapeError) as e:
        st.sq_dist_test(st.ones(2), st.ones(3))
    assert e.value.code == "broadcast_error_incompatible_dimensions"
    info = st.get_op_info("sq_dist_test")
    assert info["has_autograd"] and info["devices"] == ["cpu"]


def test_register_forward_per_dtype_and_unregister():
    calls = []
    handle = st.register_forward("neg", "cpu", lambda a: calls.append(a.dtype) or -a, dtypes=[st.float64])
    try:
        assert (-st.tensor([1.0], dtype=st.float64)).tolist() == [-1.0]
        assert (-st.tensor([1.0])).tolist() == [-1.0]  # float32 falls back to the built-in kernel
        assert len(calls) == 1
    finally:
        handle.unregister()
    -st.tensor([1.0], dtype=st.float64)
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda: st.register_forward("nope", "cpu", lambda a: a), "op_not_found_error"),
        (lambda: st.register_backward("exp", 3), "invalid_config_error"),
        (lambda: st.register_function("add", lambda x: x), "function_already_registered_error"),
        (lambda: st.register_method("sum", lambda x: x), "method_already_registered_error"),
        (lambda: st.register_dtype("float32", storage="f4"), "dtype_already_registered_error"),
        (lambda: st.register_dtype("cplx_test", storage="f4", components=2), "dtype_components_mismatch_error"),
        (lambda: st.get_op_info("ad"), "op_not_found_error"),
    ],
)
def test_registry_errors(call, code):
    with pytest.raises(st.ShapetorchError) as e:
        call()
    assert e.value.code == code


def test_did_you_mean_for_unknown_ops():
    with pytest.raises(st.ShapetorchError, match="did you mean 'matmul'"):
        st.get_op_info("matmull")


def test_wrong_gradient_count_is_an_error():
    h = st.register_backward("sin", lambda g, x, output: (g, g))
    try:
        x = st.tensor([1.0], requires_grad=True)
        with pytest.raises(st.AutogradError) as e:
            x.sin().sum().backward()
        assert e.value.code == "autograd_gradient_mismatch_error"
    finally:
        h.unregister()


def test_introspection_lists():
    assert "add" in st.list_ops() and "sum" in st.list_methods() and ("add", "cpu") in st.list_kernels("add")
    assert st.has_dtype("bfloat16") and st.has_device("cpu") and not st.has_device("tpu")
    assert st.get_dtype_info(st.int8)["min"] == -128
    assert st.get_real_dtype(st.complex128) is st.float64


def test_coverage_report_claims_are_true():
    # Each claim is re-checked here, the way torch would be asked.
    for row in st.coverage_report(["exp", "matmul", "bitwise_and"]):
        torch_ok = True
        try:
            t = torch.ones(2, 2, dtype=getattr(torch, row.dtype))
            getattr(torch, row.op)(*((t,) if row.op == "exp" else (t, t)))
        except (RuntimeError, TypeError, NotImplementedError):
            torch_ok = False
        assert row.forward == torch_ok, row
