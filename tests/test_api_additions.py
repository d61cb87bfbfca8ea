"""Public names torch has that ordinary programs use, added together: values, dtypes, shapes, gradients and
errors against torch (the oracle) for each.

``*_copy`` and ``as_strided_scatter``; the factories ``empty_strided``, ``new_empty_strided``, ``empty_permuted``,
``scalar_tensor``, ``asarray``, ``fill``; ``vander``, ``binomial``, ``Tensor.bernoulli``, ``nonzero_static``,
``rsub``, ``gradient``; ``get_device``, ``is_inference``, ``typename``, the anomaly switches, ``GradScaler``;
matmul's node names, operator and message; ``F.linear_cross_entropy``, ``nn.LinearCrossEntropyLoss``,
``F.conv_tbc``, ``F.native_channel_shuffle``; ``optim.Muon``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

RNG = np.random.default_rng(0)


def arr(*shape: int, dtype: Any = np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def on(lib: Any, value: Any, requires_grad: bool = False) -> Any:
    """``value`` (an array, or a list or tuple of them) as ``lib``'s tensors."""
    if isinstance(value, np.ndarray):
        t = lib.tensor(value)
        return t.requires_grad_(True) if requires_grad else t
    if isinstance(value, (list, tuple)):
        return type(value)(on(lib, v, requires_grad) for v in value)
    return value


def same(t: Any, s: Any, atol: float = 1e-5) -> None:
    """One result of torch and of shapetorch agree: values, shape, dtype (or the same for each of a tuple)."""
    if isinstance(t, (tuple, list)):
        assert isinstance(s, (tuple, list)) and len(s) == len(t)
        for a, b in zip(t, s):
            same(a, b, atol)
        return
    assert str(s.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(s.shape) == tuple(t.shape)
    np.testing.assert_allclose(s.detach().numpy(), t.detach().numpy(), atol=atol, rtol=1e-5, equal_nan=True)


def same_error(fn: Callable[[Any], Any]) -> str:
    """``fn`` fails under both; shapetorch's exception is an instance of torch's class and carries a code."""
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(st)
    assert isinstance(got.value, type(want.value)), (type(got.value), type(want.value))
    code = getattr(got.value, "code", None)
    assert code, f"no shapetorch error code on {got.value!r}"
    return str(code)


# -- *_copy ------------------------------------------------------------------------------------------------------

COPIES = [
    ("view_copy", (2, 3, 4), ((4, 6),)), ("permute_copy", (2, 3, 4), ((2, 0, 1),)),
    ("transpose_copy", (2, 3, 4), (0, 2)), ("t_copy", (2, 3), ()), ("squeeze_copy", (2, 1, 4), ()),
    ("squeeze_copy", (2, 1, 4), (1,)), ("unsqueeze_copy", (2, 3), (1,)), ("expand_copy", (1, 3), ((4, 3),)),
    ("select_copy", (2, 3, 4), (1, 2)), ("slice_copy", (2, 3, 5), (2, 1, 4, 2)), ("slice_copy", (5, 2), ()),
    ("split_copy", (2, 3, 4), (2, 2)), ("split_with_sizes_copy", (2, 3, 4), ([1, 2], 1)),
    ("unbind_copy", (2, 3, 4), (1,)), ("diagonal_copy", (2, 3, 4), (0, 1, 2)), ("alias_copy", (2, 3), ()),
    ("unfold_copy", (2, 3, 4), (2, 2, 1)), ("as_strided_copy", (2, 3, 4), ((2, 2), (1, 2), 1)),
    ("view_as_real_copy", None, ()), ("view_as_complex_copy", (3, 2), ()),
]


@pytest.mark.parametrize(("name", "shape", "args"), COPIES, ids=[f"{c[0]}-{i}" for i, c in enumerate(COPIES)])
def test_copies_values_storage_and_grads(name, shape, args):
    a = (arr(3) + 1j * arr(3)).astype(np.complex64) if shape is None else arr(*shape)
    grads = a.dtype.kind != "c" and "complex" not in name  # torch refuses to record view_as_complex_copy
    t, s = on(torch, a, grads), on(st, a, grads)
    rt, rs = getattr(torch, name)(t, *args), getattr(st, name)(s, *args)
    same(rt, rs)
    for piece in rs if isinstance(rs, tuple) else (rs,):
        assert piece.is_contiguous()
        assert not np.shares_memory(piece.detach().numpy(), s.detach().numpy())  # a copy, not a view
    if not grads:
        return
    first_t, first_s = (rt[0], rs[0]) if isinstance(rt, tuple) else (rt, rs)
    (first_t * first_t).sum().backward()
    (first_s * first_s).sum().backward()
    same(t.grad, s.grad)


def test_copies_write_into_out_and_detach_copy_leaves_the_graph():
    a = arr(2, 3)
    out = st.empty(3, 2)
    res = st.transpose_copy(st.tensor(a), 0, 1, out=out)
    assert res is out
    np.testing.assert_array_equal(out.numpy(), a.T)
    d = st.detach_copy(st.tensor(a, requires_grad=True))
    assert not d.requires_grad  # torch's claims requires_grad, then its backward raises: documented
    np.testing.assert_array_equal(d.numpy(), a)


def test_copies_errors():
    assert same_error(lambda m: m.slice_copy(m.ones(3), 0, 0, 2, 0)) == "argument_error_invalid"
    assert same_error(lambda m: m.transpose_copy(m.ones(3), 0, 3)) == "transpose_dims_error_out_of_range"
    assert same_error(lambda m: m.view_copy(m.ones(2, 3), (4, 2)))
    assert same_error(lambda m: m.as_strided_scatter(m.zeros(3, 3), m.ones(3), (2,), (4,))) == "argument_error_invalid"


def test_as_strided_scatter_values_and_grads():
    a, src = arr(3, 3), arr(2, 2)
    ts, tsrc, ss, ssrc = on(torch, a, True), on(torch, src, True), on(st, a, True), on(st, src, True)
    rt = torch.as_strided_scatter(ts, tsrc, (2, 2), (3, 1), 1)
    rs = st.as_strided_scatter(ss, ssrc, (2, 2), (3, 1), 1)
    same(rt, rs)
    w = arr(3, 3)
    (rt * torch.tensor(w)).sum().backward()
    (rs * st.tensor(w)).sum().backward()
    same(tsrc.grad, ssrc.grad)
    # torch 2.13's gradient for ``input`` is wrong (it keeps the overwritten elements' and zeroes the rest): ours
    # is the complement of the scattered positions, checked against the definition
    want = w.copy().reshape(-1)
    want[[1, 2, 4, 5]] = 0.0
    np.testing.assert_allclose(ss.grad.numpy().reshape(-1), want, rtol=1e-6)
    same(st.zeros(2, 3).as_strided_scatter(st.ones(2), (2,), (4,)), torch.zeros(2, 3).as_strided_scatter(
        torch.ones(2), (2,), (4,)))


# -- factories ---------------------------------------------------------------------------------------------------

def test_strided_factories():
    for m in (torch, st):
        e = m.empty_strided((2, 3), (1, 2))
        assert tuple(e.shape) == (2, 3) and e.stride() == (1, 2) and str(e.dtype).endswith("float32")
        e = m.ones(2, dtype=m.float64).new_empty_strided((2, 3), (1, 2))
        assert e.stride() == (1, 2) and str(e.dtype).endswith("float64")
        e = m.empty_permuted((2, 3, 4), (0, 2, 1), dtype=m.int64, requires_grad=False)
        assert e.stride() == (12, 1, 3) and not e.is_contiguous() and str(e.dtype).endswith("int64")
        assert m.empty_strided((2, 3), (3, 1), requires_grad=True).requires_grad
    same_error(lambda m: m.empty_strided((2, 3), (1,)))
    same_error(lambda m: m.empty_strided((2, -1), (1, 1)))
    same_error(lambda m: m.empty_permuted((2, 3), (0,)))


def test_scalar_tensor_fill_and_asarray():
    for v, kw in ((3, {}), (True, {}), (2.5, {}), (2, {"dtype": "int64"})):
        kw_t = {k: getattr(torch, x) for k, x in kw.items()}
        kw_s = {k: getattr(st, x) for k, x in kw.items()}
        same(torch.scalar_tensor(v, **kw_t), st.scalar_tensor(v, **kw_s))
    a = arr(2, 3)
    same(torch.fill(torch.tensor(a), 2.5), st.fill(st.tensor(a), 2.5))
    same(torch.fill(torch.arange(3), 2.7), st.fill(st.arange(3), 2.7))
    same(torch.fill(torch.tensor(a), torch.tensor(3.0)), st.fill(st.tensor(a), st.tensor(3.0)))
    x = st.tensor(a, requires_grad=True)
    y = st.fill(x, 1.0)
    assert y.requires_grad and y.grad_fn.name() == "FillBackward0"
    y.sum().backward()  # out of place: the input's gradient is zero, as torch's
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(a))
    same_error(lambda m: m.fill(m.ones(2, 3), m.ones(2)))

    s = st.tensor(a)
    assert st.asarray(s) is s and st.asarray(s, copy=True) is not s
    n = np.ones(3)
    shared = st.asarray(n)
    n[0] = 5.0
    assert shared[0].item() == 5.0  # shares the NumPy array's memory, as torch's
    for obj in ([1, 2], 3.5, [[1.0, 2.0]], [True]):
        same(torch.asarray(obj), st.asarray(obj))
    same(torch.asarray([1, 2], dtype=torch.float64), st.asarray([1, 2], dtype=st.float64))
    assert st.asarray([1.0], requires_grad=True).requires_grad
    same_error(lambda m: m.asarray([1, 2], copy=False))
    same_error(lambda m: m.asarray(m.ones(2), dtype=m.float64, copy=False))


# -- vander, binomial, bernoulli, nonzero_static, rsub ------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "bool", "complex64"])
@pytest.mark.parametrize(("N", "increasing"), [(None, False), (None, True), (1, False), (4, True), (0, False)])
def test_vander(dtype, N, increasing):
    a = np.array([1.5, -2.0, 3.0]) if dtype not in ("bool",) else np.array([True, False, True])
    t = torch.tensor(a).to(getattr(torch, dtype))
    s = st.tensor(a).to(getattr(st, dtype))
    same(torch.vander(t, N=N, increasing=increasing), st.vander(s, N=N, increasing=increasing))


def test_vander_grads_and_errors():
    a = np.array([0.5, -2.0, 3.0])
    s = st.tensor(a, requires_grad=True)
    st.vander(s, increasing=False).sum().backward()
    # d/dx (x^2 + x + 1) = 2x + 1 (torch's own backward of vander is broken in 2.13: it raises)
    np.testing.assert_allclose(s.grad.numpy(), 2 * a + 1)
    assert same_error(lambda m: m.vander(m.ones(2, 2))) == "argument_error_invalid"
    assert same_error(lambda m: m.vander(m.ones(2), N=-1)) == "argument_error_invalid"
    same_error(lambda m: m.vander(m.tensor(2.0)))


def test_binomial():
    st.manual_seed(0)
    count = st.tensor([10.0, 5.0, 0.0, 7.0])
    prob = st.tensor([0.5, 0.2, 0.9, 1.0])
    out = st.binomial(count, prob)
    assert out.dtype == st.float32 and tuple(out.shape) == (4,)
    values = out.numpy()
    assert np.all(values >= 0) and np.all(values <= count.numpy()) and values[2] == 0 and values[3] == 7
    draws = st.binomial(st.full((20000,), 10.0), st.full((20000,), 0.3)).numpy()
    assert abs(draws.mean() - 3.0) < 0.05 and abs(draws.var() - 2.1) < 0.1  # the binomial's mean and variance
    same_error(lambda m: m.binomial(m.tensor([10, 5]), m.tensor([0.5, 0.2])))
    same_error(lambda m: m.binomial(m.tensor([10.0, 5.0]), m.tensor([0.5, 0.2], dtype=m.float64)))


def test_bernoulli_method():
    st.manual_seed(0)
    x = st.full((10000,), 0.25)
    assert abs(x.bernoulli().mean().item() - 0.25) < 0.02
    assert abs(st.ones(10000).bernoulli(0.7).mean().item() - 0.7) < 0.02
    same_error(lambda m: m.arange(3).bernoulli())


@pytest.mark.parametrize(("a", "size", "fill"), [
    ([0, 1, 0, 2], 4, -1), ([0, 1, 0, 2], 1, -1), ([[0, 1], [1, 1]], 5, -7), ([0, 1], 0, -1), (1, 2, -1),
    ([[0.0, 1.5], [0.0, 0.0]], 3, 9),
])
def test_nonzero_static(a, size, fill):
    same(torch.nonzero_static(torch.tensor(a), size=size, fill_value=fill),
         st.nonzero_static(st.tensor(a), size=size, fill_value=fill))
    same(torch.tensor(a).nonzero_static(size=size), st.tensor(a).nonzero_static(size=size))


def test_nonzero_static_errors():
    assert same_error(lambda m: m.nonzero_static(m.tensor([0, 1]), size=-1)) == "argument_error_invalid"


def test_rsub():
    a, b = arr(2, 3), arr(3)
    same(torch.rsub(torch.tensor(a), torch.tensor(b)), st.rsub(st.tensor(a), st.tensor(b)))
    same(torch.rsub(torch.tensor(a), 2, alpha=3), st.rsub(st.tensor(a), 2, alpha=3))
    same(torch.rsub(torch.arange(3), 1.5), st.rsub(st.arange(3), 1.5))
    t, s = on(torch, a, True), on(st, a, True)
    (torch.rsub(t, 1.0, alpha=2.0) ** 2).sum().backward()
    (st.rsub(s, 1.0, alpha=2.0) ** 2).sum().backward()
    same(t.grad, s.grad)
    same_error(lambda m: m.rsub(m.ones(2, dtype=m.bool), m.ones(2, dtype=m.bool)))
    same_error(lambda m: m.rsub(1, m.ones(2)))
    same_error(lambda m: m.rsub(m.ones(2), m.ones(3)))


# -- gradient ----------------------------------------------------------------------------------------------------

GRADIENT_CASES = [
    ((4, 5), {}), ((4, 5), {"edge_order": 2}), ((4, 5), {"spacing": 2.5}), ((4, 5), {"spacing": [2.0, 3.0]}),
    ((4, 5), {"dim": 1}), ((4, 5), {"dim": [1, 0], "spacing": [1.5, 2.0], "edge_order": 2}),
    ((4, 5), {"spacing": "coords"}), ((4, 5), {"spacing": "coords", "edge_order": 2}),
    ((2, 3, 4), {"dim": -1, "spacing": "coords", "edge_order": 2}), ((2,), {}), ((3,), {"edge_order": 2}),
]


@pytest.mark.parametrize(("shape", "kw"), GRADIENT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_values_and_grads(shape, kw, dtype):
    a = arr(*shape, dtype=dtype)
    kw_t, kw_s = dict(kw), dict(kw)
    if kw.get("spacing") == "coords":
        dims = kw.get("dim", list(range(len(shape))))
        dims = [dims] if isinstance(dims, int) else dims
        coords = [np.cumsum(RNG.random(shape[d]) + 0.1).astype(dtype) for d in dims]
        kw_t["spacing"], kw_s["spacing"] = on(torch, coords), on(st, coords)
    t, s = on(torch, a, True), on(st, a, True)
    rt, rs = torch.gradient(t, **kw_t), st.gradient(s, **kw_s)
    assert isinstance(rs, tuple)
    same(rt, rs, atol=1e-4)
    w = [arr(*shape, dtype=dtype) for _ in rt]
    sum((g * torch.tensor(x)).sum() for g, x in zip(rt, w)).backward()
    sum((g * st.tensor(x)).sum() for g, x in zip(rs, w)).backward()
    same(t.grad, s.grad, atol=1e-4)


def test_gradient_dtypes():
    for a in ([1, 4, 9, 16, 30], [[1.0, 2.0, 4.0], [3.0, 5.0, 6.0]], np.array([1 + 1j, 2, 5], dtype=np.complex64)):
        same(torch.gradient(torch.tensor(a)), st.gradient(st.tensor(a)))
        same(torch.gradient(torch.tensor(a), spacing=2, dim=-1, edge_order=2),
             st.gradient(st.tensor(a), spacing=2, dim=-1, edge_order=2))
    same(torch.gradient(torch.ones(3, 3), spacing=torch.tensor(2.0)), st.gradient(st.ones(3, 3), spacing=st.tensor(2.0)))
    same(torch.gradient(torch.tensor([1.0, 4.0, 9.0]), spacing=None), st.gradient(st.tensor([1.0, 4.0, 9.0]), spacing=None))


def test_gradient_errors():
    assert same_error(lambda m: m.gradient(m.tensor([1.0, 4.0]), edge_order=2)) == "argument_error_invalid"
    assert same_error(lambda m: m.gradient(m.ones(3), edge_order=3)) == "argument_error_invalid"
    same_error(lambda m: m.gradient(m.ones(2, 3), spacing=[1.0, 2.0, 3.0]))
    same_error(lambda m: m.gradient(m.ones(3, 3), dim=[0], spacing=[1.0, 2.0]))
    same_error(lambda m: m.gradient(m.ones(3, 3), spacing=[m.tensor(2.0), m.tensor(1.0)]))
    same_error(lambda m: m.gradient(m.ones(3, 3), dim=(0, 0)))
    assert same_error(lambda m: m.gradient(m.ones(3, 3), dim=2)) == "dimension_error_out_of_range"
    same_error(lambda m: m.gradient(m.ones(3, dtype=m.bool)))
    assert same_error(lambda m: m.gradient(m.ones(3, dtype=m.uint8))) == "argument_error_invalid"


# -- small namespace functions -----------------------------------------------------------------------------------

def test_namespace_functions():
    def f() -> None:
        pass

    objects = (3, "a", None, f)
    for m in (torch, st):
        assert m.get_device(m.ones(1)) == -1 and m.ones(1).get_device() == -1
        assert m.is_inference(m.ones(1)) is False
        with m.inference_mode():
            assert m.is_inference(m.ones(1)) is True
    for o in objects:
        assert st.typename(o) == torch.typename(o)
    for t_dtype, s_dtype in ((torch.float32, st.float32), (torch.int64, st.int64), (torch.bool, st.bool)):
        assert st.typename(st.ones(1, dtype=s_dtype)) == torch.typename(torch.ones(1, dtype=t_dtype)).replace(
            "torch.", "shapetorch.")
    assert st.typename(st.nn.Linear) == torch.typename(torch.nn.Linear).replace("torch.", "shapetorch.")
    assert st.typename(st.nn.Linear(1, 1)) == "shapetorch.nn.modules.linear.Linear"
    assert st.GradScaler is st.amp.GradScaler


def test_anomaly_switches():
    assert st.is_anomaly_enabled() is False and st.is_anomaly_check_nan_enabled() is True
    try:
        st.set_anomaly_enabled(True, check_nan=False)
        assert st.is_anomaly_enabled() is True and st.is_anomaly_check_nan_enabled() is False
        assert st.autograd.anomaly_mode.is_anomaly_enabled() is True
    finally:
        st.set_anomaly_enabled(False)
    assert st.is_anomaly_enabled() is False and st.is_anomaly_check_nan_enabled() is True


# -- matmul ------------------------------------------------------------------------------------------------------

RANKS = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (5, 3, 4)), ((5, 2, 3), (3, 4)),
         ((2, 3), (5, 3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((1, 5, 2, 3), (5, 3, 4))]


@pytest.mark.parametrize(("sa", "sb"), RANKS)
def test_matmul_node_names(sa, sb):
    for op in (lambda m, x, y: x @ y, lambda m, x, y: m.matmul(x, y)):
        names = [op(m, m.ones(sa, requires_grad=True), m.ones(sb, requires_grad=True)).grad_fn.name()
                 for m in (torch, st)]
        assert names[0] == names[1]


def test_matmul_operator_refuses_non_tensors_as_python_does():
    for m in (torch, st):
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for @: 'Tensor' and 'int'"):
            m.ones(2, 3) @ 3
        with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for @: 'int' and 'Tensor'"):
            3 @ m.ones(2, 3)
    p = st.nn.Parameter(st.ones(2, 3))
    assert tuple((p @ st.ones(3)).shape) == (2,) and tuple((st.ones(2) @ p).shape) == (3,)


@pytest.mark.parametrize(("sa", "sb", "words"), [
    ((2, 3), (4, 5), "(2x3 and 4x5)"), ((2, 2, 3), (4, 5), "(4x3 and 4x5)"),
])
def test_matmul_message_reads_like_torchs(sa, sb, words):
    for fn in (lambda m: m.ones(sa) @ m.ones(sb), lambda m: m.matmul(m.ones(sa), m.ones(sb))):
        with pytest.raises(RuntimeError, match="mat1 and mat2 shapes cannot be multiplied") as want:
            fn(torch)
        assert words in str(want.value)
        code = same_error(fn)
        assert code == "matmul_error_inner_dimensions_do_not_match"
        with pytest.raises(st.ShapeError) as got:
            fn(st)
        assert f"mat1 and mat2 shapes cannot be multiplied {words}" in str(got.value)
    with pytest.raises(st.ShapeError, match=r"cannot be multiplied \(2x3 and 4x5\)"):
        st.nn.functional.linear(st.ones(2, 3), st.ones(5, 4))
    with pytest.raises(st.ShapeError) as vec:
        st.ones(3) @ st.ones(4, 5)
    assert "mat1" not in str(vec.value)  # torch's message for a vector is another one


# -- nn ----------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc(pad):
    x, w, b = arr(5, 2, 3), arr(3, 3, 4), arr(4)
    ts, ss = [on(torch, v, True) for v in (x, w, b)], [on(st, v, True) for v in (x, w, b)]
    rt, rs = torch.nn.functional.conv_tbc(*ts, pad), st.nn.functional.conv_tbc(*ss, pad)
    same(rt, rs)
    same(torch.conv_tbc(*ts, pad), st.conv_tbc(*ss, pad))
    g = arr(*rt.shape)
    (rt * torch.tensor(g)).sum().backward()
    (rs * st.tensor(g)).sum().backward()
    for a, c in zip(ts, ss):
        same(a.grad, c.grad, atol=1e-4)


def test_conv_tbc_errors():
    F = "nn.functional"

    def call(m: Any, *shapes: tuple[int, ...]) -> Any:
        fn = m.nn.functional.conv_tbc
        return fn(*(m.ones(s) for s in shapes))

    assert F
    same_error(lambda m: call(m, (2, 3), (3, 3, 4), (4,)))
    same_error(lambda m: call(m, (5, 2, 3), (3, 4), (4,)))
    same_error(lambda m: call(m, (5, 2, 3), (3, 2, 4), (4,)))
    same_error(lambda m: call(m, (5, 2, 3), (3, 3, 4), (3,)))


def test_native_channel_shuffle():
    a = np.arange(24.0, dtype=np.float32).reshape(2, 6, 2)
    same(torch.nn.functional.native_channel_shuffle(torch.tensor(a), 3),
         st.nn.functional.native_channel_shuffle(st.tensor(a), 3))
    same(torch.native_channel_shuffle(torch.tensor(a), 2), st.native_channel_shuffle(st.tensor(a), 2))
    same_error(lambda m: m.nn.functional.native_channel_shuffle(m.ones(2, 5, 2), 2))


LCE_CASES = [
    ((4, 5), (3, 5), None, (4,), {}), ((4, 5), (3, 5), (3,), (4,), {"reduction": "none"}),
    ((4, 5), (3, 5), (3,), (4,), {"label_smoothing": 0.1, "ignore_index": 1}),
    ((5,), (3, 5), None, (), {"reduction": "sum"}),
    ((4, 5), (3, 2, 5), (3, 2), (4, 2), {}), ((4, 5), (3, 5), None, "probs", {}),
    ((4, 5), (3, 5), None, (4,), {"weight": True}),
]


@pytest.mark.parametrize(("si", "sw", "sb", "st_", "kw"), LCE_CASES)
def test_linear_cross_entropy(si, sw, sb, st_, kw):
    inp, w = arr(*si), arr(*sw)
    bias = arr(*sb) if sb else None
    classes = sw[0]
    if st_ == "probs":
        p = RNG.random((si[0], classes)).astype(np.float32)
        target = p / p.sum(1, keepdims=True)
    else:
        target = RNG.integers(0, classes, st_)
    kw = dict(kw)
    weight = arr(classes) ** 2 if kw.pop("weight", None) else None
    results, grads = [], []
    for m in (torch, st):
        x, lw = on(m, inp, True), on(m, w, True)
        out = m.nn.functional.linear_cross_entropy(x, lw, on(m, target), linear_bias=on(m, bias),
                                                   weight=on(m, weight), **kw)
        out.sum().backward()
        results.append(out)
        grads.append((x.grad, lw.grad))
    same(results[0], results[1], atol=1e-4)
    same(grads[0], grads[1], atol=1e-4)


def test_linear_cross_entropy_errors():
    def lce(m: Any, si: Any, sw: Any, **kw: Any) -> Any:
        return m.nn.functional.linear_cross_entropy(m.ones(si), m.ones(sw), m.zeros(2, dtype=m.int64), **kw)

    same_error(lambda m: lce(m, (2, 3, 4), (3, 4)))
    same_error(lambda m: lce(m, (2, 4), (3,)))
    same_error(lambda m: lce(m, (2, 4), (3, 5)))
    same_error(lambda m: lce(m, (4,), (3, 2, 4)))
    same_error(lambda m: lce(m, (2, 4), (3, 4), linear_bias=m.ones(2)))
    same_error(lambda m: m.nn.functional.linear_cross_entropy(m.ones(2, 4), m.ones(3, 4), m.ones(2, 3) / 3,
                                                              ignore_index=0))


def test_linear_cross_entropy_loss_module():
    torch.manual_seed(0)
    for kw in ({"bias": True}, {"out_features": (2,), "bias": True, "label_smoothing": 0.2}, {"reduction": "sum"}):
        tm = torch.nn.LinearCrossEntropyLoss(5, 3, **kw)
        sm = st.nn.LinearCrossEntropyLoss(5, 3, **kw)
        assert repr(sm) == repr(tm)
        assert [n for n, _ in sm.named_parameters()] == [n for n, _ in tm.named_parameters()]
        sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
        inp = arr(4, 5)
        target = RNG.integers(0, 3, (4, *kw.get("out_features", ())))
        same(tm(torch.tensor(inp), torch.tensor(target)), sm(st.tensor(inp), st.tensor(target)), atol=1e-5)
    for bad in ({"label_smoothing": 2.0}, {"weight": "wrong"}):
        def make(m: Any, bad: dict[str, Any] = bad) -> Any:
            kw = {k: (m.ones(4) if v == "wrong" else v) for k, v in bad.items()}
            return m.nn.LinearCrossEntropyLoss(5, 3, **kw)

        same_error(make)


# -- Muon --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("shape", "kw"), [
    ((4, 6), {}), ((6, 4), {"nesterov": False}), ((5, 5), {"adjust_lr_fn": "match_rms_adamw", "lr": 0.02}),
    ((8, 3), {"weight_decay": 0.0, "momentum": 0.5, "ns_steps": 3, "adjust_lr_fn": "original"}),
])
def test_muon_steps_like_torch(shape, kw):
    w0 = arr(*shape)
    tp, sp = torch.nn.Parameter(torch.tensor(w0)), st.nn.Parameter(st.tensor(w0))
    topt, sopt = torch.optim.Muon([tp], **kw), st.optim.Muon([sp], **kw)
    lr = kw.get("lr", 1e-3)
    scale = lr * max(1.0, 0.2 * max(shape) ** 0.5, (shape[0] / shape[1]) ** 0.5)
    for _ in range(3):
        g = arr(*shape)
        tp.grad, sp.grad = torch.tensor(g), st.tensor(g)
        topt.step()
        sopt.step()
        np.testing.assert_allclose(sopt.state[sp]["momentum_buffer"].numpy(),
                                   topt.state[tp]["momentum_buffer"].numpy(), rtol=1e-6, atol=1e-7)
    # the orthogonalized update runs in bfloat16: a few bfloat16 ulps of the update (of size ~1) apart
    np.testing.assert_allclose(sp.detach().numpy(), tp.detach().numpy(), atol=0.05 * scale)
    assert np.abs(sp.detach().numpy() - w0).max() > scale / 10  # it moved


def test_muon_orthogonalizes():
    from torch.optim._muon import _zeropower_via_newtonschulz

    from shapetorch.optim.muon import orthogonalize

    for shape in ((4, 6), (6, 4), (16, 16)):
        g = arr(*shape)
        want = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        got = orthogonalize(st.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        assert got.dtype == st.bfloat16 and tuple(got.shape) == shape
        np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), atol=0.04)
        sv = np.linalg.svd(got.float().numpy(), compute_uv=False)
        assert sv.min() > 0.4 and sv.max() < 1.6  # US'V^T with S' near 1, as torch documents


def test_muon_errors():
    for fn in (lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3))]),
               lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3, 3))], adjust_lr_fn="x"),
               lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3, 3))], lr=-1),
               lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3, 3))], momentum=-1)):
        with pytest.raises(ValueError) as want:
            fn(torch)
        with pytest.raises(ValueError) as got:
            fn(st)
        assert str(got.value).replace("shapetorch", "torch") == str(want.value)


def test_deprecated_out_of_place_resize():
    a = arr(6)
    results = []
    for m in (torch, st):
        x = on(m, a, True)
        with pytest.warns(UserWarning, match="non-inplace resize is deprecated"):
            y = x.resize(2, 3)
        with pytest.warns(UserWarning, match="non-inplace resize_as is deprecated"):
            z = x.resize_as(m.ones(3, 2))
        (y * y).sum().backward()
        results.append((y, z, x.grad))
    same(results[0], results[1])
    with pytest.warns(UserWarning):
        assert same_error(lambda m: m.ones(6).resize(4, 2)) == "argument_error_invalid"


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod", "amax", "amin"])
@pytest.mark.parametrize("initial", [None, 0.5])
@pytest.mark.parametrize("by", ["lengths", "offsets"])
def test_segment_reduce(reduce, initial, by):
    a = arr(6, 2)
    segments = [2, 0, 3, 1]
    given = np.array(segments if by == "lengths" else np.concatenate([[0], np.cumsum(segments)]), dtype=np.int64)
    t, s = on(torch, a, True), on(st, a, True)
    rt = torch.segment_reduce(t, reduce, **{by: torch.tensor(given)}, initial=initial)
    rs = st.segment_reduce(s, reduce, **{by: st.tensor(given)}, initial=initial)
    same(rt, rs)
    if reduce in ("sum", "mean", "prod"):  # (max/min: torch and amax agree away from ties; no ties here)
        keep_t, keep_s = torch.isfinite(rt), st.isfinite(rs)
        rt[keep_t].sum().backward()
        rs[keep_s].sum().backward()
        same(t.grad, s.grad)


def test_segment_reduce_errors():
    lengths = [2, 0, 3, 1]
    assert same_error(lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([2, 2]))) == "argument_error_invalid"
    same_error(lambda m: m.segment_reduce(m.ones(6), "foo", lengths=m.tensor(lengths)))
    same_error(lambda m: m.segment_reduce(m.ones(6), "sum"))
    same_error(lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor([2, -1, 5])))
    same_error(lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor(lengths), axis=1))
    same_error(lambda m: m.segment_reduce(m.arange(6), "sum", lengths=m.tensor(lengths)))
    same_error(lambda m: m.segment_reduce(m.ones(6), "sum", lengths=m.tensor(lengths).float()))


HISTDD_CASES = [
    {"bins": [2, 3]}, {"bins": 4}, {"bins": 2, "range": [-1.0, 2.0, -1.0, 1.0], "density": True},
    {"bins": "edges"}, {"bins": [3, 2], "weight": True}, {"bins": 3, "density": True, "weight": True},
]


@pytest.mark.parametrize("kw", HISTDD_CASES)
def test_histogramdd(kw):
    x = arr(50, 2)
    kw_t, kw_s = dict(kw), dict(kw)
    if kw.get("bins") == "edges":
        edges = [np.array([-2.0, 0.0, 1.0, 3.0], np.float32), np.array([-1.0, 0.5, 1.0], np.float32)]
        kw_t["bins"], kw_s["bins"] = on(torch, edges), on(st, edges)
    if kw.get("weight"):
        w = RNG.random(50).astype(np.float32)
        kw_t["weight"], kw_s["weight"] = torch.tensor(w), st.tensor(w)
    t, s = torch.histogramdd(torch.tensor(x), **kw_t), st.histogramdd(st.tensor(x), **kw_s)
    assert type(s).__name__ == "histogramdd"
    same(t.hist, s.hist)
    same(tuple(t.bin_edges), tuple(s.bin_edges))


def test_histogramdd_errors():
    same_error(lambda m: m.histogramdd(m.ones(4, 2), bins=[2, 2, 2]))
    same_error(lambda m: m.histogramdd(m.ones(4, 2), bins=2, range=[0.0, 1.0]))
    same_error(lambda m: m.histogramdd(m.ones(4, 2, dtype=m.int64), bins=2))
    same_error(lambda m: m.histogramdd(m.ones(4, 2), bins=2, weight=m.ones(3)))
