"""Forward-mode AD, the functional API, gradcheck/gradgradcheck, anomaly detection and the profiler."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw
import torch.autograd.functional as TFn

import shapetorch as st
import shapetorch.autograd.forward_ad as fwAD
from shapetorch import autograd
from shapetorch.autograd import functional as SFn


def arr(t):
    return np.asarray(t.detach().numpy())


# -- forward AD ----------------------------------------------------------------------------------------

def test_dual_level_make_dual_unpack_dual():
    with fwAD.dual_level():
        p = st.tensor([1.0, 2.0])
        d = fwAD.make_dual(p, st.tensor([1.0, 0.0]))
        out = (d * d).sin()
        primal, tangent = fwAD.unpack_dual(out)
        np.testing.assert_allclose(arr(primal), np.sin([1.0, 4.0]))
        np.testing.assert_allclose(arr(tangent), np.cos([1.0, 4.0]) * [2.0, 0.0])
        assert fwAD.unpack_dual(p).tangent is None
        assert fwAD.unpack_dual(st.ones(2)).primal.tolist() == [1.0, 1.0]
    assert fwAD.unpack_dual(out).tangent is None  # tangents end with their level


def test_forward_ad_errors_match_torch():
    for mod, lib in ((fwAD, st), (tfw, torch)):
        with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level\\(\\) first"):
            mod.make_dual(lib.ones(2), lib.ones(2))
        with mod.dual_level():
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
                with mod.dual_level():
                    pass
            with pytest.raises(RuntimeError, match="Tensor is of size \\[2\\] while the given forward gradient is of "
                                                   "size \\[3\\]"):
                mod.make_dual(lib.ones(2), lib.ones(3))


def test_forward_and_reverse_compose():
    x = st.tensor([0.5, 1.0], requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, st.ones(2))
        y = (d.exp() * d).sum()
        y.backward()
        tangent = fwAD.unpack_dual(y).tangent
    np.testing.assert_allclose(arr(x.grad), np.exp([0.5, 1.0]) * [1.5, 2.0])
    np.testing.assert_allclose(tangent.item(), float(np.sum(np.exp([0.5, 1.0]) * [1.5, 2.0])))


# -- functional API -------------------------------------------------------------------------------------

def f_multi(x, y):
    return (x * y).sin(), x.exp().sum() * y


def f_scalar(x, y):
    return ((x ** 3) * y.sin()).sum() + (x * y).sum() ** 2


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)  # torch's forward-mode jacobian nests lists
        for u, v in zip(a, b):
            _same(u, v)
        return
    np.testing.assert_allclose(arr(a), b.detach().numpy(), rtol=1e-9, atol=1e-12)


def _inputs(lib):
    return lib.tensor([0.3, -1.2, 0.7], dtype=lib.float64), lib.tensor([1.1, 0.4, -0.5], dtype=lib.float64)


@pytest.mark.parametrize("create_graph", [False, True])
def test_functional_api_matches_torch(create_graph):
    sx, tx = _inputs(st), _inputs(torch)
    v3 = ([1.0, 2.0, -1.0], [0.5, 0.0, 1.0])
    sv = tuple(st.tensor(v, dtype=st.float64) for v in v3)
    tv = tuple(torch.tensor(v, dtype=torch.float64) for v in v3)
    _same(SFn.jacobian(f_multi, sx, create_graph=create_graph), TFn.jacobian(f_multi, tx, create_graph=create_graph))
    _same(SFn.jacobian(lambda x: x.sin(), sx[0], vectorize=True), TFn.jacobian(lambda x: x.sin(), tx[0],
                                                                               vectorize=True))
    _same(SFn.hessian(f_scalar, sx, create_graph=create_graph), TFn.hessian(f_scalar, tx, create_graph=create_graph))
    _same(SFn.vjp(f_multi, sx, sv, create_graph=create_graph), TFn.vjp(f_multi, tx, tv, create_graph=create_graph))
    _same(SFn.jvp(f_multi, sx, sv, create_graph=create_graph), TFn.jvp(f_multi, tx, tv, create_graph=create_graph))
    _same(SFn.vhp(f_scalar, sx, sv, create_graph=create_graph), TFn.vhp(f_scalar, tx, tv, create_graph=create_graph))
    _same(SFn.hvp(f_scalar, sx, sv, create_graph=create_graph), TFn.hvp(f_scalar, tx, tv, create_graph=create_graph))


def test_functional_forward_mode_jacobian_and_errors():
    sx, tx = _inputs(st), _inputs(torch)
    _same(SFn.jacobian(f_multi, sx, strategy="forward-mode", vectorize=True),
          TFn.jacobian(f_multi, tx, strategy="forward-mode", vectorize=True))
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        SFn.jacobian(f_multi, sx, create_graph=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="independent of input 1. This is not allowed in strict mode"):
        SFn.jacobian(lambda x, y: x * 2, sx, strict=True)
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided function returns a "
                                           "single Tensor with a single element."):
        SFn.vjp(f_multi, sx)
    with pytest.raises(RuntimeError, match="The function given to hvp should return a single Tensor"):
        SFn.hvp(f_multi, sx, sx)
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors"):
        SFn.jacobian(lambda x: x, [1.0])


# -- gradcheck ------------------------------------------------------------------------------------------

def test_gradcheck_and_gradgradcheck_checks():
    x = st.tensor([0.3, 0.9], dtype=st.float64, requires_grad=True)
    assert autograd.gradcheck(lambda t: (t * t).sin(), (x,), check_forward_ad=True)
    assert autograd.gradgradcheck(lambda t: (t * t).sin(), (x,))
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to require gradient"):
        autograd.gradcheck(lambda t: t * 2, (st.ones(2, dtype=st.float64),))
    with pytest.warns(UserWarning, match="is not a double precision floating point"):
        autograd.gradcheck(lambda t: t * 2, (st.ones(2, requires_grad=True),), eps=1e-2, atol=1e-2, rtol=1e-2)


# -- anomaly detection --------------------------------------------------------------------------------------

def _myfunc():
    class MyFunc(autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            return inp.clone()

        @staticmethod
        def backward(ctx, gO):
            raise RuntimeError("Some error in backward")

    return MyFunc


def run_fn(a):
    out = _myfunc().apply(a)  # the line the forward traceback must show
    return out.sum()


def test_anomaly_reference_example_shows_the_forward_traceback():
    inp = st.rand(10, 10, requires_grad=True)
    out = run_fn(inp)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError, match="Some error in backward"):
            out.backward()
    assert not [w for w in rec if "Traceback of forward call" in str(w.message)]  # off: no traceback
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        mode = autograd.detect_anomaly()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with mode:
            inp = st.rand(10, 10, requires_grad=True)
            out = run_fn(inp)
            with pytest.raises(RuntimeError, match="Some error in backward"):
                out.backward()
    msgs = [str(w.message) for w in rec if "Traceback of forward call that caused the error" in str(w.message)]
    assert len(msgs) == 1
    assert "Error detected in MyFuncBackward" in msgs[0]
    assert "in run_fn" in msgs[0] and "out = _myfunc().apply(a)" in msgs[0]
    assert "shapetorch/autograd" not in msgs[0]
    assert not autograd.is_anomaly_enabled()


def test_anomaly_nan_in_backward_raises():
    x = st.tensor([0.0, 1.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled() and autograd.is_anomaly_check_nan_enabled()
        y = (x.sqrt() * 0).sum()  # d sqrt at 0 is inf, times 0 is nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output."):
                y.backward()
    assert not autograd.is_anomaly_enabled()
    y = (x.sqrt() * 0).sum()
    y.backward()  # without anomaly mode, nan goes through
    assert np.isnan(arr(x.grad)[0])
    autograd.set_detect_anomaly(True, check_nan=False)
    try:
        x.grad = None
        (x.sqrt() * 0).sum().backward()
    finally:
        autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


# -- profiler -----------------------------------------------------------------------------------------------

def test_profiler_reference_example(tmp_path):
    x = st.randn((1, 1), requires_grad=True)
    with autograd.profiler.profile(record_shapes=True) as prof:
        for _ in range(100):
            y = x ** 2
            y.backward()
    table = prof.key_averages().table(sort_by="self_cpu_time_total")
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg", "# of Calls"):
        assert col in table
    rows = {r.key: r for r in prof.key_averages()}
    assert rows["aten::pow"].count == 200 and rows["PowBackward0"].count == 100  # 200: backward uses pow too
    assert rows["torch::autograd::AccumulateGrad"].count == 100
    assert "Self CPU time total:" in table
    assert prof.self_cpu_time_total > 0
    assert prof.self_cpu_time_total == pytest.approx(sum(r.self_cpu_time_total for r in prof.key_averages()))
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(prof.events())
    ordered = [r.key for r in prof.key_averages()]
    by_calls = prof.key_averages().table(sort_by="count", row_limit=1)
    assert ordered  # sorted by count: the most called row is first
    assert max(rows.values(), key=lambda r: r.count).key in by_calls
    shaped = prof.key_averages(group_by_input_shape=True)
    assert any(r.input_shapes == [[1, 1], []] for r in shaped if r.key == "aten::pow")
    assert "Input Shapes" in shaped.table()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = {e["name"] for e in trace["traceEvents"]}
    assert {"aten::pow", "PowBackward0"} <= names and all(e["ph"] == "X" for e in trace["traceEvents"])


def test_profiler_record_function_nesting_and_no_ops():
    x = st.ones(3)
    with autograd.profiler.profile() as prof:
        with autograd.profiler.record_function("my_block"):
            x * 2
            x + 1
    ev = {e.name: e for e in prof.events()}
    block = ev["my_block"]
    assert len(block.cpu_children) == 2
    assert block.self_cpu_time_total <= block.cpu_time_total
    with autograd.profiler.profile(enabled=False) as off:
        x * 2
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        off.key_averages()
    with autograd.profiler.profile() as running, pytest.raises(RuntimeError, match="didn't finish"):
        running.key_averages()
    with autograd.profiler.emit_nvtx(record_shapes=True), autograd.profiler.emit_itt():
        assert (x * 2).tolist() == [2.0, 2.0, 2.0]
