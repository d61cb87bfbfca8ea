"""torch's other spellings, legacy constructors, named-tuple results and tensor attributes, against torch.

Each name here is one a user's program reaches for (``x.clamp_min(0)``, ``torch.Tensor(3, 4)``,
``print(x.max(1))``, ``x.contiguous(memory_format=torch.channels_last)``, ``torch.svd``); the values,
gradients, reprs and errors are compared with torch's.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import shapetorch as st

RNG = np.random.default_rng(0)


def _pair(shape: tuple[int, ...], grad: bool = False) -> tuple[st.Tensor, torch.Tensor]:
    a = RNG.standard_normal(shape)
    return st.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad)


def _same(ours: st.Tensor, theirs: torch.Tensor) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("alias", "args"), [
    ("absolute", ()), ("arccos", ()), ("arcsin", ()), ("arctan", ()), ("arcsinh", ()), ("arctanh", ()),
    ("negative", ()), ("fix", ()), ("greater", (0.1,)), ("greater_equal", (0.1,)), ("less", (0.1,)),
    ("less_equal", (0.1,)), ("not_equal", (0.1,)), ("clamp_min", (0.2,)), ("clamp_max", (0.2,)),
])
def test_aliases_are_their_ops_as_function_method_and_in_place(alias: str, args: tuple[float, ...]) -> None:
    a = np.clip(RNG.standard_normal((3, 4)), -0.9, 0.9)
    ours, theirs = st.tensor(a), torch.tensor(a)
    _same(getattr(st, alias)(ours, *args), getattr(torch, alias)(theirs, *args))
    _same(getattr(ours, alias)(*args), getattr(theirs, alias)(*args))
    if hasattr(torch.Tensor, alias + "_") and not alias.startswith(("greater", "less", "not_equal")):
        o, t = ours.clone(), theirs.clone()
        assert getattr(o, alias + "_")(*args) is o
        getattr(t, alias + "_")(*args)
        _same(o, t)


def test_arctan2_and_igamma_take_two_tensors() -> None:
    (a, ta), (b, tb) = _pair((5,)), _pair((5,))
    _same(st.arctan2(a, b), torch.arctan2(ta, tb))
    _same(a.abs().igamma(b.abs()), ta.abs().igamma(tb.abs()))
    _same(st.igammac(a.abs(), b.abs()), torch.igammac(ta.abs(), tb.abs()))


@pytest.mark.parametrize("name", ["exp_", "relu_", "sigmoid_", "neg_", "zero_", "clamp_min_"])
def test_top_level_in_place_functions_write_into_their_argument(name: str) -> None:
    a, ta = _pair((2, 3))
    args = (0.1,) if name == "clamp_min_" else ()
    assert getattr(st, name)(a, *args) is a
    getattr(torch, name)(ta, *args)
    _same(a, ta)


def test_in_place_alias_records_the_graph() -> None:
    (a, ta) = _pair((4,), grad=True)
    y, ty = (a * 1).negative_(), (ta * 1).negative_()
    (y * y.detach()).sum().backward()
    (ty * ty.detach()).sum().backward()
    _same(a.grad, ta.grad)


def _fields(text: str) -> list[str]:
    return re.findall(r"^(\w+)=", text, re.MULTILINE)


def test_return_types_print_and_name_as_torch() -> None:
    a, ta = _pair((2, 3))
    for ours, theirs in [(a.max(1), ta.max(1)), (st.sort(a), torch.sort(ta)), (a.topk(2), ta.topk(2)),
                         (a.aminmax(), ta.aminmax()), (st.linalg.slogdet(a[:, :2]), torch.linalg.slogdet(ta[:, :2])),
                         (st.frexp(a), torch.frexp(ta)), (st.svd(a), torch.svd(ta)), (st.qr(a), torch.qr(ta))]:
        assert type(ours).__name__ == type(theirs).__name__
        assert repr(ours).replace("shapetorch", "torch").split("\n")[0] == repr(theirs).split("\n")[0]
        assert _fields(repr(ours)) == _fields(repr(theirs))
    assert st.return_types.max is type(a.max(1))
    values, indices = a.min(0)
    _same(values, ta.min(0).values)


@pytest.mark.parametrize("args", [(2, 3), ([1, 2],), ([[1.5, 2.0]],), (), (st.Size([2, 1]),)])
def test_legacy_constructor_makes_float_tensors(args: tuple[object, ...]) -> None:
    targs = tuple(torch.Size(a) if isinstance(a, st.Size) else a for a in args)
    ours, theirs = st.Tensor(*args), torch.Tensor(*targs)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype is st.float32
    if not (args and isinstance(args[0], int)) and not (args and isinstance(args[0], st.Size)):
        _same(ours, theirs)  # sizes give uninitialised memory in torch: only the shape is compared


def test_typed_tensor_classes() -> None:
    assert st.LongTensor([1, 2]).dtype is st.int64 and st.FloatTensor(2, 2).shape == (2, 2)
    assert isinstance(st.ones(2), st.FloatTensor) and not isinstance(st.ones(2), st.LongTensor)
    assert isinstance(st.ones(2, dtype=st.int64), st.LongTensor)
    x = st.ones(2)
    assert x.type() == "shapetorch.FloatTensor" and torch.ones(2).type() == "torch.FloatTensor"
    assert x.type(st.LongTensor).dtype is st.int64 and x.type("torch.DoubleTensor").dtype is st.float64
    assert x.new(3).shape == (3,) and x.new([1, 2]).dtype is st.float32 and x.new().shape == (0,)
    p = st.nn.Parameter(st.Tensor(3, 4))
    assert p.shape == (3, 4) and p.requires_grad


def test_channels_last_strides_match_torch() -> None:
    a = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    ours = st.tensor(a).contiguous(memory_format=st.channels_last)
    theirs = torch.tensor(a).contiguous(memory_format=torch.channels_last)
    assert ours.stride() == theirs.stride()
    assert ours.is_contiguous(memory_format=st.channels_last) and not ours.is_contiguous()
    _same(ours, theirs)
    with pytest.raises(RuntimeError):
        st.ones(2, 3).contiguous(memory_format=st.channels_last)
    assert repr(st.channels_last) == "shapetorch.channels_last" and st.ones(1).layout is st.strided


@pytest.mark.parametrize(("name", "args"), [("t_", ()), ("transpose_", (0, 1)), ("unsqueeze_", (1,)),
                                            ("squeeze_", ()), ("swapaxes_", (1, 0))])
def test_in_place_view_ops_change_the_tensor_and_its_gradient(name: str, args: tuple[int, ...]) -> None:
    a, ta = _pair((3, 1), grad=True)
    y, ty = a * 2, ta * 2
    assert getattr(y, name)(*args) is y
    getattr(ty, name)(*args)
    assert tuple(y.shape) == tuple(ty.shape) and y.stride() == ty.stride()
    (y * y.detach()).sum().backward()
    (ty * ty.detach()).sum().backward()
    _same(a.grad, ta.grad)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        getattr(a, name)(*args)


def test_storage_and_kind_attributes() -> None:
    x, tx = st.ones(2, 3), torch.ones(2, 3)
    assert x.t()[1:].storage_offset() == tx.t()[1:].storage_offset()
    assert x.data_ptr() == x.view(6).data_ptr() != x.clone().data_ptr()
    assert x.get_device() == tx.get_device() == -1
    for flag in ("is_sparse", "is_quantized", "is_meta", "is_nested", "is_mps"):
        assert getattr(x, flag) is False is getattr(tx, flag)
    assert st.is_signed(x) and not st.is_signed(x.bool()) and not st.ones(1, dtype=st.uint8).is_signed()
    assert x.pin_memory() is x and not x.is_pinned() and x.resolve_conj() is x and not x.is_conj()
    assert x.dim_order() == tx.dim_order() and x.t().dim_order() == tx.t().dim_order()


def test_resize_and_sum_to_size() -> None:
    ours = st.arange(6.0).resize_(2, 2)
    _same(ours, torch.arange(6.0).resize_(2, 2))
    assert st.zeros(2).resize_as_(st.ones(3, 1)).shape == (3, 1)
    with pytest.raises(RuntimeError, match="require grad"):
        st.ones(2, requires_grad=True).resize_(4)
    a, ta = _pair((2, 3, 4))
    _same(a.sum_to_size(3, 1), ta.sum_to_size(3, 1))
    _same(a.sum_to_size(1, 4), ta.sum_to_size(1, 4))
    with pytest.raises(RuntimeError, match="not expandable"):
        a.sum_to_size(2, 4)


def test_masked_scatter_put_fill_diagonal_renorm_against_torch() -> None:
    (a, ta), (s, ts) = _pair((3, 4), grad=True), _pair((20,), grad=True)
    m = a.detach() > 0
    for ours, theirs in [(a.masked_scatter(m, s), ta.masked_scatter(torch.tensor(m.numpy()), ts)),
                         (a.put(st.tensor([0, 5, -1]), s[:3], True), ta.put(torch.tensor([0, 5, -1]), ts[:3], True)),
                         (a.renorm(2, 0, 1.0), ta.renorm(2, 0, 1.0)), (a.renorm(1, 1, 0.5), ta.renorm(1, 1, 0.5))]:
        _same(ours, theirs)
        ours.pow(2).sum().backward()
        theirs.pow(2).sum().backward()
        _same(a.grad, ta.grad)
        _same(s.grad, ts.grad)
    for shape, wrap in [((3, 4), False), ((7, 3), False), ((7, 3), True), ((3, 3, 3), False)]:
        ours, theirs = st.zeros(*shape), torch.zeros(*shape)
        ours.fill_diagonal_(2.0, wrap)
        theirs.fill_diagonal_(2.0, wrap)
        _same(ours, theirs)


def test_rarer_samplers_follow_their_distributions() -> None:
    st.manual_seed(0)
    assert abs(st.empty(20000).cauchy_(1.0, 0.5).median().item() - 1.0) < 0.05
    assert abs(st.empty(20000).log_normal_(0.0, 0.5).log().std().item() - 0.5) < 0.02
    draws = st.empty(20000).geometric_(0.25)
    assert draws.min().item() >= 1 and abs(draws.mean().item() - 4.0) < 0.15
    with pytest.raises(RuntimeError):
        st.empty(3).geometric_(1.5)


def test_older_linear_algebra_functions_against_torch() -> None:
    a, ta = _pair((4, 3))
    for ours, theirs in [(st.svd(a), torch.svd(ta)), (st.qr(a), torch.qr(ta)), (st.qr(a, False), torch.qr(ta, False))]:
        for o, t in zip(ours, theirs):  # the factors' signs are LAPACK's in both
            _same(o.abs(), t.abs())
    s = RNG.standard_normal((3, 3))
    spd, ts = st.tensor(s @ s.T + 3 * np.eye(3)), torch.tensor(s @ s.T + 3 * np.eye(3))
    _same(st.cholesky(spd), torch.linalg.cholesky(ts))
    LU, piv = st.lu(st.tensor(s))
    tLU, tpiv = torch.linalg.lu_factor(torch.tensor(s))
    _same(LU, tLU)
    for o, t in zip(st.lu_unpack(LU, piv), torch.lu_unpack(tLU, tpiv)):
        _same(o, t)
    b, tb = _pair((3, 2))
    _same(st.lu_solve(b, LU, piv), torch.linalg.lu_solve(tLU, tpiv, tb))
    for upper in (True, False):
        for transpose in (True, False):
            _same(st.triangular_solve(b, st.tensor(s), upper, transpose).solution,
                  torch.linalg.solve_triangular(torch.tensor(s).mT if transpose else torch.tensor(s), tb,
                                                upper=upper != transpose))
    L = np.linalg.cholesky(s @ s.T + 3 * np.eye(3))
    for upper in (False, True):
        F = L.T if upper else L
        _same(st.cholesky_solve(b, st.tensor(F), upper), torch.cholesky_solve(tb, torch.tensor(F), upper))
        _same(st.cholesky_inverse(st.tensor(F), upper), torch.cholesky_inverse(torch.tensor(F), upper))
    _same(st.nuclear_norm(a), torch.nuclear_norm(ta))
    with pytest.raises(RuntimeError, match="torch.linalg.solve"):
        st.solve(a, a)


def test_split_with_sizes_and_polygamma_in_place() -> None:
    assert [p.shape for p in st.arange(6).split_with_sizes([2, 4])] == [(2,), (4,)]
    a = st.tensor([1.0, 2.0])
    _same(a.polygamma_(1), torch.tensor([1.0, 2.0]).polygamma_(1))
