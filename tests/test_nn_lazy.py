"""Lazy modules and uninitialized parameters against torch: the inferred sizes, the class they become, the
state dict before and after the first forward, loading checkpoints, and outputs/gradients with torch's weights."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from tests._nn_oracle import compare_module, to_st

import shapetorch as st

warnings.filterwarnings("ignore", message="Lazy modules")

# (lazy name, constructor arguments, input shape)
CASES = [
    ("LazyLinear", (3,), (2, 5)),
    ("LazyLinear", (4, False), (2, 3, 6)),
    ("LazyConv1d", (4, 3), (2, 3, 7)),
    ("LazyConv2d", (4, 3), (2, 2, 5, 5)),
    ("LazyConv2d", (4, 3), (2, 5, 5)),  # unbatched: in_channels is the first size
    ("LazyConv3d", (2, 2), (1, 3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3, 2, 0, 0, 2), (1, 2, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), (4, 3)),
    ("LazyBatchNorm2d", (), (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (1e-3, 0.2, False), (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), (4, 3, 5)),
    ("LazyInstanceNorm2d", (), (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (1e-5, 0.1, False, False), (2, 3, 2, 2, 2)),
]


def _state(m):
    return [(k, type(v).__name__) for k, v in m.state_dict().items()]


@pytest.mark.parametrize(("name", "args", "shape"), CASES)
def test_lazy_module_infers_sizes_and_becomes_the_regular_class(name, args, shape):
    sm, tm = getattr(st.nn, name)(*args).double(), getattr(torch.nn, name)(*args).double()
    assert repr(sm) == repr(tm)
    assert [k for k, _ in _state(sm)] == [k for k, _ in _state(tm)]
    for (_, a), (_, b) in zip(_state(sm), _state(tm)):
        assert a.replace("Tensor", "") == b.replace("Tensor", "")  # Uninitialized* as torch; tensors otherwise
    assert sm.has_uninitialized_params() == tm.has_uninitialized_params()
    x = np.random.default_rng(1).normal(size=shape)
    tm(torch.tensor(x))
    sm(st.tensor(x))
    assert type(sm).__name__ == type(tm).__name__
    assert not isinstance(sm, st.nn.modules.lazy.LazyModuleMixin)
    assert repr(sm) == repr(tm)
    assert {k: tuple(v.shape) for k, v in sm.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in tm.state_dict().items()}
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        if k in tm.state_dict():  # the first forward already updated the statistics
            np.testing.assert_allclose(sm.state_dict()[k].numpy(), tm.state_dict()[k].numpy(), rtol=1e-10)
    tm.train()
    compare_module(sm.train(), tm, [x])  # outputs and gradients with torch's weights


@pytest.mark.parametrize(("name", "regular", "args", "shape"), [
    ("LazyLinear", ("Linear", (5, 3)), (3,), (2, 5)),
    ("LazyConv2d", ("Conv2d", (2, 4, 3)), (4, 3), (1, 2, 5, 5)),
    ("LazyConvTranspose1d", ("ConvTranspose1d", (3, 4, 3)), (4, 3), (2, 3, 5)),
])
def test_lazy_initialisation_is_the_regular_layers(name, regular, args, shape):
    x = st.randn(*shape)
    st.manual_seed(3)
    want = getattr(st.nn, regular[0])(*regular[1])
    st.manual_seed(3)
    lazy = getattr(st.nn, name)(*args)
    lazy(x)
    for (k, a), (_, b) in zip(want.state_dict().items(), lazy.state_dict().items()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_optimizer_sees_materialized_parameters():
    m = st.nn.LazyLinear(2)
    w = m.weight
    opt = st.optim.SGD(m.parameters(), lr=0.5)
    x = st.randn(3, 4)
    m(x).sum().backward()
    assert m.weight is w and type(w) is st.nn.Parameter and tuple(w.shape) == (2, 4)
    before = w.detach().clone()
    opt.step()
    np.testing.assert_allclose(w.detach().numpy(), (before - 0.5 * w.grad).numpy())


def test_loading_a_regular_checkpoint_materializes():
    tm = torch.nn.Conv1d(3, 4, 2)
    sm = st.nn.LazyConv1d(4, 2)
    tl = torch.nn.LazyConv1d(4, 2)
    sm.load_state_dict({k: to_st(v) for k, v in tm.state_dict().items()})
    tl.load_state_dict(tm.state_dict())
    assert type(sm).__name__ == type(tl).__name__ == "LazyConv1d"  # the class changes on forward only
    assert tuple(sm.weight.shape) == tuple(tl.weight.shape)
    x = np.random.default_rng(0).normal(size=(2, 3, 6)).astype(np.float32)
    np.testing.assert_allclose(sm(st.tensor(x)).detach().numpy(), tl(torch.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    assert type(sm).__name__ == type(tl).__name__ == "Conv1d"


def test_lazy_into_lazy_and_lazy_into_regular():
    sm, tm = st.nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert not sm.load_state_dict(st.nn.LazyLinear(3).state_dict()).missing_keys
    tm.load_state_dict(torch.nn.LazyLinear(3).state_dict())
    assert sm.has_uninitialized_params() and tm.has_uninitialized_params()
    with pytest.raises(RuntimeError) as ours:
        st.nn.Linear(4, 3).load_state_dict(st.nn.LazyLinear(3).state_dict())
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.Linear(4, 3).load_state_dict(torch.nn.LazyLinear(3).state_dict())
    assert "uninitialized parameter" in str(ours.value) and "uninitialized parameter" in str(theirs.value)


def test_uninitialized_parameter_answers_as_torchs():
    for lib in (st, torch):
        p = lib.nn.UninitializedParameter()
        b = lib.nn.UninitializedBuffer()
        assert lib.nn.parameter.is_lazy(p) and lib.nn.parameter.is_lazy(b)
        assert not lib.nn.parameter.is_lazy(lib.nn.Parameter(lib.zeros(2)))
        assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
        assert p.requires_grad and not b.requires_grad
        assert str(p.dtype).split(".")[-1] == "float32"
        with pytest.raises(RuntimeError, match="uninitialized parameter"):
            p.shape  # noqa: B018
        with pytest.raises(ValueError, match="uninitialized parameter"):
            p.numel()
        p.materialize((2, 3), dtype=lib.float64)
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3) and p.dtype == lib.float64
        b.materialize(4)
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,)


def test_lazy_conv_rejects_a_wrong_rank_as_torch():
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        st.nn.LazyConv2d(2, 3)(st.randn(5, 5))
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) input to LazyConv2d"):
        torch.nn.LazyConv2d(2, 3)(torch.randn(5, 5))
    for lib in (st, torch):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.LazyConv1d(4, 3, groups=2)(lib.randn(1, 3, 5))


def test_lazy_module_keeps_dtype_given_before_forward():
    m = st.nn.LazyLinear(3).double()
    m(st.randn(2, 4, dtype=st.float64))
    assert m.weight.dtype == st.float64 and m.bias.dtype == st.float64


def test_operators_on_uninitialized_parameters_are_refused_as_torch():
    for lib in (st, torch):
        p = lib.nn.UninitializedParameter()
        for use in (lambda: p + 1, lambda: 2 * p, lambda: -p, lambda: p[0], lambda: bool(p), lambda: len(p)):
            with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
                use()
        assert p in [p]  # membership compares identities first, as the optimizers' checks need


_USES = {"add": lambda lib, t: lib.add(t, 1.0), "mul": lambda lib, t: lib.mul(t, t), "exp": lambda lib, t: lib.exp(t),
         "sum": lambda lib, t: lib.sum(t), "cat": lambda lib, t: lib.cat([t, t]),
         "matmul": lambda lib, t: lib.matmul(t, t), "where": lambda lib, t: lib.where(t > 0, t, t),
         # no primitive of the engine sees these (the argument guard refuses them: NOTE [uninitialized tensors])
         "ones_like": lambda lib, t: lib.ones_like(t), "zeros_like": lambda lib, t: lib.zeros_like(t),
         "empty_like": lambda lib, t: lib.empty_like(t), "argsort": lambda lib, t: lib.argsort(t),
         "nonzero": lambda lib, t: lib.nonzero(t), "bessel_j0": lambda lib, t: lib.special.bessel_j0(t),
         "numel": lambda lib, t: lib.numel(t), "second": lambda lib, t: lib.add(lib.ones(1), t),
         "keyword": lambda lib, t: lib.ones_like(input=t), "atleast_1d": lambda lib, t: lib.atleast_1d(t, t)}


@pytest.mark.parametrize("call", list(_USES))
def test_functions_on_uninitialized_tensors_are_refused_as_torch(call):
    """torch refuses them in any function (its ``__torch_function__``), not only in operators: they must never
    compute on the empty storage. (tests/_bad_input.py's ``uninitialized_input`` tries every public function.)"""
    for lib in (st, torch):
        for t in (lib.nn.UninitializedParameter(), lib.nn.UninitializedBuffer()):
            with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter"):
                _USES[call](lib, t)
