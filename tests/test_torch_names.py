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
    with pytest.raises(RuntimeError, match="negative dimension"):
        st.Tensor(-1, 2)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.Tensor(-1, 2)


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


@pytest.mark.parametrize("dims", [2, 3])
def test_grid_sample_and_affine_grid_against_torch(dims: int) -> None:
    modes = ["bilinear", "nearest", "bicubic"] if dims == 2 else ["bilinear", "nearest"]
    shape, gshape = ((2, 3, 5, 6), (2, 4, 3, 2)) if dims == 2 else ((2, 2, 4, 5, 3), (2, 3, 4, 2, 3))
    for mode in modes:
        for padding in ("zeros", "border", "reflection"):
            for align in (True, False):
                (x, tx), g = _pair(shape, grad=True), RNG.uniform(-1.4, 1.4, gshape)
                grid, tgrid = st.tensor(g, requires_grad=True), torch.tensor(g, requires_grad=True)
                ours = st.nn.functional.grid_sample(x, grid, mode, padding, align)
                theirs = torch.nn.functional.grid_sample(tx, tgrid, mode, padding, align)
                _same(ours, theirs)
                w = RNG.standard_normal(tuple(theirs.shape))
                (ours * st.tensor(w)).sum().backward()
                (theirs * torch.tensor(w)).sum().backward()
                _same(x.grad, tx.grad)
                _same(grid.grad, tgrid.grad)  # (zeros in nearest mode, not None)
    size, theta_shape = ((2, 3, 4, 5), (2, 2, 3)) if dims == 2 else ((2, 1, 3, 4, 5), (2, 3, 4))
    for align in (True, False):
        theta, ttheta = _pair(theta_shape)
        _same(st.nn.functional.affine_grid(theta, size, align), torch.nn.functional.affine_grid(ttheta, size, align))
    with pytest.raises(RuntimeError):
        st.nn.functional.grid_sample(x, grid, mode="cubic")
    # a NaN coordinate reads nothing in nearest mode with zeros padding (it crashed the gather)
    g = RNG.uniform(-1, 1, gshape)
    g.reshape(-1)[0] = np.nan
    ours = st.nn.functional.grid_sample(x.detach(), st.tensor(g), "nearest", "zeros", False)
    _same(ours, torch.nn.functional.grid_sample(tx.detach(), torch.tensor(g), "nearest", "zeros", False))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_values_and_gradients_against_torch(reduction: str, zero_infinity: bool) -> None:
    T, N, C = 12, 3, 5
    logits = RNG.standard_normal((T, N, C))
    theirs_lp = torch.tensor(logits).log_softmax(-1).detach().requires_grad_()
    ours_lp = st.tensor(theirs_lp.detach().numpy(), requires_grad=True)
    targets, target_lengths, input_lengths = [[1, 2, 2, 3], [4, 1, 0, 0], [2, 3, 1, 0]], [4, 2, 3], [12, 10, 11]
    ours = st.nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)(
        ours_lp, st.tensor(targets), st.tensor(input_lengths), st.tensor(target_lengths))
    theirs = torch.nn.CTCLoss(reduction=reduction, zero_infinity=zero_infinity)(
        theirs_lp, torch.tensor(targets), torch.tensor(input_lengths), torch.tensor(target_lengths))
    _same(ours, theirs)
    ours.sum().backward()
    theirs.sum().backward()
    _same(ours_lp.grad, theirs_lp.grad)
    # an alignment that cannot exist (3 repeated labels in 2 frames) is inf, or 0 with zero_infinity
    lp = torch.randn(2, 1, 3).log_softmax(-1)
    ours = st.nn.functional.ctc_loss(st.tensor(lp.numpy()), st.tensor([[1, 1, 1]]), [2], [3], reduction="none",
                                     zero_infinity=zero_infinity)
    _same(ours, torch.nn.functional.ctc_loss(lp, torch.tensor([[1, 1, 1]]), [2], [3], reduction="none",
                                              zero_infinity=zero_infinity))


def test_ctc_loss_takes_concatenated_targets_and_unbatched_input() -> None:
    lp = torch.randn(6, 2, 4).log_softmax(-1)
    _same(st.nn.functional.ctc_loss(st.tensor(lp.numpy()), st.tensor([1, 2, 3]), [6, 5], [2, 1]),
          torch.nn.functional.ctc_loss(lp, torch.tensor([1, 2, 3]), [6, 5], [2, 1]))
    lp1 = lp[:, 0]
    _same(st.nn.functional.ctc_loss(st.tensor(lp1.numpy()), st.tensor([1, 2]), st.tensor(6), st.tensor(2)),
          torch.nn.functional.ctc_loss(lp1, torch.tensor([1, 2]), torch.tensor(6), torch.tensor(2)))


def test_swa_utils_average_and_anneal_as_torch() -> None:
    from torch.optim import swa_utils as tswa

    from shapetorch.optim import swa_utils as sswa

    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 1))
    smodel = st.nn.Sequential(st.nn.Linear(3, 4), st.nn.BatchNorm1d(4), st.nn.Linear(4, 1))
    smodel.load_state_dict({k: st.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
    tavg, savg = tswa.AveragedModel(tmodel), sswa.AveragedModel(smodel)
    tema = tswa.AveragedModel(tmodel, multi_avg_fn=tswa.get_ema_multi_avg_fn(0.9))
    sema = sswa.AveragedModel(smodel, multi_avg_fn=sswa.get_ema_multi_avg_fn(0.9))
    topt, sopt = torch.optim.SGD(tmodel.parameters(), lr=0.1), st.optim.SGD(smodel.parameters(), lr=0.1)
    tsched, ssched = tswa.SWALR(topt, swa_lr=0.01, anneal_epochs=3), sswa.SWALR(sopt, swa_lr=0.01, anneal_epochs=3)
    x = RNG.standard_normal((8, 3))
    for _ in range(4):
        for model, opt, lib in ((tmodel, topt, torch), (smodel, sopt, st)):
            opt.zero_grad()
            model(lib.tensor(x, dtype=lib.float32)).pow(2).mean().backward()
            opt.step()
        tavg.update_parameters(tmodel), savg.update_parameters(smodel)
        tema.update_parameters(tmodel), sema.update_parameters(smodel)
        tsched.step(), ssched.step()
        assert sopt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
    for ours, theirs in ((savg, tavg), (sema, tema)):
        for (k, a), (k2, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
            assert k == k2
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    loader = [(torch.tensor(x, dtype=torch.float32),)]
    tswa.update_bn(loader, tavg)
    sswa.update_bn([(st.tensor(x, dtype=st.float32),)], savg)
    np.testing.assert_allclose(savg.module[1].running_var.numpy(), tavg.module[1].running_var.numpy(), rtol=1e-5)


def test_nn_functions_in_torch_namespace_take_torch_signatures() -> None:
    (x, tx), (w, tw) = _pair((2, 3, 8)), _pair((4, 3, 3))
    _same(st.conv1d(x, w, padding=1), torch.conv1d(tx, tw, padding=1))
    _same(st.convolution(x, w, None, [1], [1], [1], False, [0], 1),
          torch.convolution(tx, tw, None, [1], [1], [1], False, [0], 1))
    (E, tE), idx = _pair((10, 3)), [[1, 2], [0, 9]]
    _same(st.embedding(E, st.tensor(idx)), torch.embedding(tE, torch.tensor(idx)))
    _same(st.layer_norm(x, [8]), torch.layer_norm(tx, [8]))
    _same(st.group_norm(x, 3), torch.group_norm(tx, 3))
    _same(st.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False),
          torch.batch_norm(tx, None, None, None, None, True, 0.1, 1e-5, False))
    _same(st.max_pool1d(x, 2), torch.max_pool1d(tx, 2))
    for o, t in zip(st.adaptive_max_pool1d(x, 3), torch.adaptive_max_pool1d(tx, 3)):
        _same(o, t)
    _same(st.constant_pad_nd(x, [1, 2], 0.5), torch.constant_pad_nd(tx, [1, 2], 0.5))
    (a, ta), (b, tb) = _pair((4, 5)), _pair((4, 5))
    for reduction in (0, 1, 2):
        _same(st.kl_div(a, b.softmax(-1), reduction), torch.kl_div(ta, tb.softmax(-1), reduction))
        _same(st.binary_cross_entropy_with_logits(a, b.sigmoid(), None, None, reduction),
              torch.binary_cross_entropy_with_logits(ta, tb.sigmoid(), None, None, reduction))
        _same(st.margin_ranking_loss(a[0], b[0], b[1].sign(), 0.1, reduction),
              torch.margin_ranking_loss(ta[0], tb[0], tb[1].sign(), 0.1, reduction))


@pytest.mark.parametrize("cell", ["rnn_tanh_cell", "rnn_relu_cell", "gru_cell", "lstm_cell"])
def test_recurrent_cells_in_torch_namespace(cell: str) -> None:
    gates = {"gru_cell": 3, "lstm_cell": 4}.get(cell, 1)
    (x, tx), (h, th) = _pair((2, 8)), _pair((2, 5))
    (wi, twi), (wh, twh) = _pair((5 * gates, 8)), _pair((5 * gates, 5))
    (bi, tbi), (bh, tbh) = _pair((5 * gates,)), _pair((5 * gates,))
    hx, thx = ((h, h), (th, th)) if cell == "lstm_cell" else (h, th)
    ours, theirs = getattr(st, cell)(x, hx, wi, wh, bi, bh), getattr(torch, cell)(tx, thx, twi, twh, tbi, tbh)
    for o, t in zip(ours, theirs) if cell == "lstm_cell" else [(ours, theirs)]:
        _same(o, t)
