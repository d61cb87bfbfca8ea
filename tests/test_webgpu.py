"""The WebGPU backend against torch (CPU): forward values and gradients, on small tensors, one shared device.

Skipped when no WebGPU adapter exists (the reason says why), unless SHAPETORCH_REQUIRE_WEBGPU=1: then
those tests fail. CI sets it, with Mesa's lavapipe (a software Vulkan adapter) installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st
from _oracle import assert_same

REQUIRED = os.environ.get("SHAPETORCH_REQUIRE_WEBGPU") == "1"


def _why_not() -> str | None:
    from shapetorch.backends.webgpu.api import unavailable_reason

    return unavailable_reason()


def need_webgpu() -> None:
    """Skip without a WebGPU adapter, or fail where one is required (SHAPETORCH_REQUIRE_WEBGPU=1, as in CI): the
    check of every WebGPU test, as this module's fixture or called by a test that runs on several devices."""
    why = _why_not()
    if why is not None:
        if REQUIRED:
            pytest.fail(f"SHAPETORCH_REQUIRE_WEBGPU=1 but WebGPU is not available: {why}")
        pytest.skip(f"no WebGPU adapter: {why}")


@pytest.fixture(scope="module", autouse=True)
def webgpu() -> None:
    need_webgpu()


DEV = "webgpu"
F32 = (1e-4, 1e-5)  # float32 tolerance: lavapipe's transcendental functions are not correctly rounded


def data(shape: tuple[int, ...], kind: str = "f", seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "f":
        return rng.normal(size=shape).astype(np.float32)
    if kind == "pos":
        return (np.abs(rng.normal(size=shape)) + 0.5).astype(np.float32)
    if kind == "unit":
        return rng.uniform(-0.9, 0.9, size=shape).astype(np.float32)
    if kind == "i":
        return rng.integers(-5, 6, size=shape).astype(np.int64)
    if kind == "b":
        return rng.random(shape) < 0.5
    raise ValueError(kind)


def run(fn: Callable[..., Any], *arrays: np.ndarray, grad: bool = True, tol: tuple[float, float] = F32) -> Any:
    """fn(lib, *tensors) on webgpu and on torch: same values, dtypes, shapes; then the same gradients."""
    ours = []
    theirs = []
    for a in arrays:
        g = grad and a.dtype.kind == "f"
        ours.append(st.tensor(a, device=DEV, requires_grad=g))
        theirs.append(torch.tensor(a, requires_grad=g))
    got, want = fn(st, *ours), fn(torch, *theirs)
    outs = got if isinstance(got, (tuple, list)) else [got]
    for o in outs:
        if isinstance(o, st.Tensor):
            assert o.device == st.device(DEV), f"result on {o.device}"
    assert_same(got, want, tol)
    if not grad or not isinstance(want, torch.Tensor) or not want.requires_grad:
        return got
    w = np.random.default_rng(7).normal(size=tuple(want.shape)).astype(np.float32)
    (got * st.tensor(w, device=DEV)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    for i, (o, t) in enumerate(zip(ours, theirs)):
        if t.grad is not None:
            assert o.grad is not None, f"input {i}: no gradient"
            assert o.grad.device == st.device(DEV)
            assert_same(o.grad, t.grad, tol, path=f"grad[{i}]")
    return got


# -- elementwise -----------------------------------------------------------------------------------------
UNARY = {
    "neg": "f", "exp": "f", "exp2": "f", "expm1": "f", "log": "pos", "log2": "pos", "log10": "pos", "log1p": "pos",
    "sqrt": "pos", "rsqrt": "pos", "sin": "f", "cos": "f", "tan": "unit", "asin": "unit", "acos": "unit",
    "atan": "f", "sinh": "f", "cosh": "f", "tanh": "f", "asinh": "f", "atanh": "unit", "sigmoid": "f",
    "reciprocal": "pos", "abs": "f", "floor": "f", "ceil": "f", "trunc": "f", "frac": "f", "round": "f",
    "sign": "f", "square": "f",
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    run(lambda lib, x: getattr(lib, name)(x), data((3, 5), UNARY[name]) * (3 if name == "round" else 1))


def test_acosh_and_int_unary():
    run(lambda lib, x: lib.acosh(x), data((7,), "pos") + 1)
    for name in ("neg", "abs", "sign", "floor", "square"):
        run(lambda lib, x: getattr(lib, name)(x), data((2, 3), "i"))


BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "pow", "remainder", "fmod", "floor_divide"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_broadcast(name):
    a, b = data((2, 1, 4)), data((3, 1), seed=1)
    if name == "pow":
        a = np.abs(a) + 0.5
    if name in ("remainder", "fmod", "floor_divide", "div"):
        b = np.where(np.abs(b) < 0.3, 0.7, b).astype(np.float32)
    run(lambda lib, x, y: getattr(lib, name)(x, y), a, b, grad=name not in ("floor_divide",))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "remainder", "fmod", "floor_divide", "maximum", "minimum",
                                  "bitwise_and", "bitwise_or", "bitwise_xor", "eq", "lt", "ge", "ne"])
def test_binary_int(name):
    a, b = data((4, 3), "i"), data((3,), "i", seed=3)
    if name in ("remainder", "fmod", "floor_divide"):
        b[b == 0] = 2
    run(lambda lib, x, y: getattr(lib, name)(x, y), a, b)


def test_scalars_comparisons_logic():
    x = data((3, 4))
    run(lambda lib, x: 2 * x - 1.5, x)
    run(lambda lib, x: 3 / (x * x + 1) + x**2 - x**3, x)
    run(lambda lib, x: (x > 0.1) & (x < 1.0) | ~(x == 0), x)
    run(lambda lib, x: lib.logical_xor(x > 0, x < 0.5), x)
    run(lambda lib, x: lib.where(x > 0, x, x * 0.1), x)
    run(lambda lib, x: lib.where(x > 0, 1.0, x), x)
    run(lambda lib, x: x.clamp(-0.5, 0.5) + x.clamp(min=0), x)
    run(lambda lib, x: lib.pow(-2.0 + x * 0, x.round()), x, grad=False)
    run(lambda lib, b: b.logical_not(), data((5,), "b"))
    run(lambda lib, x, y: x + y, data((3,), "i"), data((3,)))  # int + float promotes


# -- reductions --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    lambda lib, x: x.sum(), lambda lib, x: x.sum(0), lambda lib, x: x.sum((0, 2), keepdim=True),
    lambda lib, x: x.mean(-1), lambda lib, x: x.prod(1), lambda lib, x: x.amax((1, 2)), lambda lib, x: x.amin(0),
    lambda lib, x: x.max(1), lambda lib, x: x.min(2, keepdim=True), lambda lib, x: x.var(1),
    lambda lib, x: x.std((0, 1), keepdim=True), lambda lib, x: x.norm(), lambda lib, x: x.logsumexp(1),
    lambda lib, x: x.argmax(), lambda lib, x: x.argmin(1), lambda lib, x: (x > 0).all(1),
    lambda lib, x: (x > 0).any(), lambda lib, x: lib.count_nonzero(x > 0, 0), lambda lib, x: x.permute(2, 0, 1).sum(0),
    lambda lib, x: lib.softmax(x, 1) if hasattr(lib, "softmax") else x.exp() / x.exp().sum(1, keepdim=True),
])
def test_reductions(expr):
    run(expr, data((3, 4, 5)))


def test_large_and_int_reductions():
    x = data((3, 5000), seed=2)  # two-pass reduction (chunks of 4096)
    run(lambda lib, x: x.sum(1), x, tol=(1e-4, 1e-3))
    run(lambda lib, x: x.reshape(-1).amax(), x)
    run(lambda lib, x: x.sum(0), data((9000, 2)), tol=(1e-4, 1e-3))
    run(lambda lib, x: x.sum(), data((4, 6), "i"))
    run(lambda lib, x: x.argmax(0), data((6, 3), "i"))
    run(lambda lib, x: x.sum(), np.zeros((0, 3), np.float32))


# -- matmul ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sa,sb", [((5, 7), (7, 3)), ((70, 130), (130, 90)), ((2, 3, 4), (4, 5)),
                                   ((2, 1, 3, 4), (3, 4, 2)), ((4,), (4, 3)), ((3, 4), (4,)), ((6,), (6,))])
def test_matmul(sa, sb):
    run(lambda lib, a, b: a @ b, data(sa), data(sb, seed=1), tol=(1e-4, 1e-4))


def test_matmul_views_and_ints():
    run(lambda lib, a, b: a.mT @ b.T, data((6, 5)), data((4, 6), seed=1))
    run(lambda lib, a, b: lib.bmm(a, b.transpose(1, 2)), data((2, 3, 4)), data((2, 5, 4), seed=1))
    run(lambda lib, a, b: a @ b, data((3, 4), "i"), data((4, 2), "i", seed=1))
    run(lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), data((2, 3, 4)), data((2, 4, 2), seed=1))
    run(lambda lib, a, b, c: lib.addmm(c, a, b), data((3, 4)), data((4, 2), seed=1), data((2,), seed=2))


# -- movement, indexing ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", [
    lambda lib, x: x.reshape(6, 4), lambda lib, x: x.permute(2, 0, 1).reshape(-1), lambda lib, x: x.transpose(0, 2),
    lambda lib, x: x.mT.contiguous(), lambda lib, x: x[1], lambda lib, x: x[:, 1:3], lambda lib, x: x[..., ::2],
    lambda lib, x: x[None, :, 0], lambda lib, x: x[:1].expand(3, 3, 4) * 2, lambda lib, x: x.unsqueeze(1).squeeze(),
    lambda lib, x: x.flatten(1), lambda lib, x: x.narrow(2, 1, 2), lambda lib, x: x.diagonal(0, 1, 2),
    lambda lib, x: x.diagonal(1, 0, 2), lambda lib, x: lib.cat([x, x * 2], 1), lambda lib, x: lib.stack([x, x], -1),
    lambda lib, x: x.split(2, 2)[1], lambda lib, x: x.chunk(2, 0)[0], lambda lib, x: x.unbind(1)[2],
    lambda lib, x: x.movedim(0, -1).reshape(3, 8), lambda lib, x: x.permute(1, 0, 2)[1:, :, 1:].reshape(2, -1),
    lambda lib, x: x[[0, 1, 1]], lambda lib, x: x[:, [2, 0]], lambda lib, x: x[x > 0],
    lambda lib, x: x[1, [0, 2], 1:], lambda lib, x: x.index_select(2, lib.tensor([3, 0, 3], device=x.device)),
    lambda lib, x: x.gather(1, lib.tensor([[[0, 2, 1, 0]], [[2, 2, 0, 1]]], device=x.device)),
    lambda lib, x: x.masked_fill(x < 0, 0.5), lambda lib, x: lib.masked_select(x, x > 0.5),
    lambda lib, x: lib.take(x, lib.tensor([0, 5, 23], device=x.device)), lambda lib, x: x.t() if x.ndim == 2 else x.sum(0).t(),
])
def test_movement_and_indexing(expr):
    run(expr, data((2, 3, 4)))


def test_scatter_and_index_put():
    idx = np.array([[0, 1, 2, 0], [2, 0, 0, 1]], dtype=np.int64)
    run(lambda lib, x, s: x.scatter_add(0, lib.tensor(idx[:, :3], device=x.device), s), data((3, 3)), data((2, 3), seed=1))
    run(lambda lib, x, s: x.scatter(1, lib.tensor(idx[:, :2], device=x.device), s), data((2, 4)), data((2, 2), seed=1), grad=False)

    def put(lib, x, v):
        y = x * 1
        y[0, 1:] = v
        y[[1, 1], [0, 2]] = 7.0
        return y

    run(put, data((2, 3)), data((2,), seed=1))

    def repeated(lib, x):  # a repeated index: the gradient accumulates
        return x[lib.tensor([0, 0, 2, 0], device=x.device)] * 1

    run(repeated, data((3, 2)))


def test_setitem_without_grad_and_inplace_ops():
    a = data((3, 4))
    x, t = st.tensor(a, device=DEV), torch.tensor(a)
    for lib, v in ((st, x), (torch, t)):
        v[1] = 0.0
        v[:, 2] = lib.tensor([1.0, 2.0, 3.0], device=v.device)
        v[v > 1.5] = -1.0
        v += 1
        v.mul_(2)
        v[0].add_(v[2])
        v.clamp_(max=3.0)
    assert_same(x, t)
    z = st.zeros(3, device=DEV)
    z.fill_(2.5)
    z.copy_(st.tensor([1, 2, 3]).to(DEV))
    assert z.tolist() == [1.0, 2.0, 3.0]
    z.zero_()
    assert z.sum().item() == 0.0


def test_casts_and_dtypes():
    a = data((2, 5)) * 4
    run(lambda lib, x: x.int(), a)
    run(lambda lib, x: x.long() * 3 + 1, a)
    run(lambda lib, x: x.to(lib.bool) | (x > 2), a)
    run(lambda lib, x: x.int().float() / 2, a)
    i = data((4,), "i")
    run(lambda lib, x: (x.float() + 0.5).round(), i)
    run(lambda lib, x: lib.arange(6, device=x.device).reshape(2, 3) * x[:3], i)


def test_float16():
    from shapetorch.backends.webgpu.runtime import RT

    a = data((4, 8))
    if not RT.has_f16:
        with pytest.raises(st.DTypeError, match="float32"):
            st.tensor(a, device=DEV).half()
        return
    run(lambda lib, x: (x.half() * 2 + 1).exp().sum(1), a, tol=(1e-2, 1e-2))
    run(lambda lib, x, y: (x.half() @ y.half()).float(), a, data((8, 3), seed=1), tol=(2e-2, 2e-2))


# -- autograd programs ---------------------------------------------------------------------------------------------
def test_mlp_training_step_matches_torch():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(16, 8)).astype(np.float32)
    ys = rng.integers(0, 4, size=16)
    w1, b1 = rng.normal(size=(8, 32)).astype(np.float32) * 0.3, np.zeros(32, np.float32)
    w2, b2 = rng.normal(size=(32, 4)).astype(np.float32) * 0.3, np.zeros(4, np.float32)

    def train(lib, dev):
        params = [lib.tensor(p, device=dev, requires_grad=True) for p in (w1, b1, w2, b2)]
        x, y = lib.tensor(xs, device=dev), lib.tensor(ys, device=dev)
        losses = []
        for _ in range(3):
            h = (x @ params[0] + params[1]).tanh()
            logits = h @ params[2] + params[3]
            logp = logits - logits.logsumexp(1, keepdim=True)
            loss = -logp.gather(1, y.unsqueeze(1)).mean()
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= 0.5 * p.grad
                    p.grad = None
            losses.append(loss.item())
        return losses, params

    ours, pw = train(st, DEV)
    theirs, tw = train(torch, "cpu")
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    for p, q in zip(pw, tw):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_double_backward_and_grad():
    a = data((5,))
    x, t = st.tensor(a, device=DEV, requires_grad=True), torch.tensor(a, requires_grad=True)
    (gx,) = st.autograd.grad((x.sin() * x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad((t.sin() * t).sum(), t, create_graph=True)
    assert_same(gx, gt, F32)
    gx.sum().backward()
    gt.sum().backward()
    assert_same(x.grad, t.grad, F32)


def test_transfers_and_printing():
    a = data((2, 3))
    x = st.tensor(a, device=DEV)
    assert x.is_cpu is False and x.to("cpu").device == st.device("cpu")
    np.testing.assert_array_equal(x.cpu().numpy(), a)
    np.testing.assert_array_equal(x.numpy(), a)
    assert "device='webgpu'" in repr(x)
    assert x[0, 1].item() == pytest.approx(float(a[0, 1]))
    y = st.tensor(a, requires_grad=True)
    z = y.to("webgpu")
    (z * 3).sum().backward()
    assert y.grad.device == st.device("cpu") and y.grad.tolist() == [[3.0] * 3] * 2
    assert x.to(st.device("webgpu")) is x
    assert st.ones(2, 3, device="webgpu").stride() == (3, 1)
    assert x.t().is_contiguous() is False and x.t().contiguous().is_contiguous()
    i = st.tensor([[0, 3], [5, 0]], device=DEV)
    assert i.nonzero().device == st.device(DEV)
    assert_same(i.nonzero(), torch.tensor([[0, 3], [5, 0]]).nonzero())


def test_errors():
    x = st.ones(3, device=DEV)
    with pytest.raises(st.DeviceError) as e:
        _ = x + st.ones(3)
    assert e.value.code == "device_error_requires" and "same device" in str(e.value)
    with pytest.raises(st.DTypeError, match="float32") as e2:
        st.ones(3, dtype=st.float64, device=DEV)
    assert "WebGPU" in str(e2.value)
    with pytest.raises(st.DTypeError, match="int32"):
        st.tensor([2**40], device=DEV)
    with pytest.raises(st.DTypeError):
        x.double()
    assert st.require_webgpu() == st.device("webgpu")


def test_memory_stats_and_pool_reuse():
    st.synchronize()
    st.empty_cache()
    before = st.memory_stats()
    for _ in range(5):
        y = st.ones(1000, device=DEV) * 2
        del y
    st.synchronize()
    after = st.memory_stats()
    assert after["num_buffer_reuses"] > before["num_buffer_reuses"]
    assert after["num_dispatches"] > before["num_dispatches"]
    assert after["num_submits"] < after["num_dispatches"]  # dispatches are batched
    keep = st.ones(1000, device=DEV)
    assert st.memory_allocated() >= 4000
    assert st.memory_reserved() >= st.memory_allocated()
    st.empty_cache()
    assert st.memory_stats()["pooled_bytes"] == 0
    del keep


def test_unavailable_is_a_clear_device_error():
    code = (
        "import shapetorch as st\n"
        "assert st.is_webgpu_available() is False\n"
        "try:\n    st.ones(2, device='webgpu')\nexcept st.DeviceError as e:\n    print(e.code, e)\n"
        "try:\n    st.require_webgpu()\nexcept st.DeviceError as e:\n    print(e.code, e)\n"
        "import sys; print('wgpu' in sys.modules)\n"
    )
    env = dict(os.environ, SHAPETORCH_WEBGPU_DISABLE="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    lines = out.strip().splitlines()
    assert lines[0].startswith("device_error_requires") and "WebGPU is not available" in lines[0]
    assert lines[1].startswith("device_error_requires") and "SHAPETORCH_WEBGPU_DISABLE" in lines[1]
    assert lines[2] == "False"


# -- kernels added for the primitives that had none -----------------------------------------------------------
SPECIAL_F = np.array([0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3.0], dtype=np.float32)


@pytest.mark.parametrize("name", ["isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"])
def test_predicates(name):
    run(lambda lib, x: getattr(lib, name)(x), SPECIAL_F, grad=False)
    run(lambda lib, x: getattr(lib, name)(x), data((3, 4), "i"), grad=False)


@pytest.mark.parametrize("name,kind", [("deg2rad", "f"), ("rad2deg", "f"), ("erfc", "f"), ("sinc", "f")])
def test_more_unary(name, kind):
    run(lambda lib, x: getattr(lib, name)(x), data((3, 5), kind))
    run(lambda lib, x: lib.sinc(x), np.array([0.0, 0.5, -1.25], np.float32))


@pytest.mark.parametrize("name", ["copysign", "fmax", "fmin", "hypot", "logaddexp", "logaddexp2", "xlogy"])
def test_more_binary(name):
    run(lambda lib, a, b: getattr(lib, name)(a, b), data((3, 4)), data((4,), "pos", seed=1))
    x = np.array([np.nan, 1.0, -0.0, np.inf, 0.0], np.float32)
    y = np.array([2.0, np.nan, -1.0, np.inf, np.nan], np.float32)
    run(lambda lib, a, b: getattr(lib, name)(a, b), x, y, grad=False)


def test_integer_binary_extras():
    run(lambda lib, a, b: lib.gcd(a, b), data((3, 4), "i"), data((3, 4), "i", seed=1))
    run(lambda lib, a, b: lib.lcm(a, b), data((3, 4), "i"), data((3, 4), "i", seed=1))
    run(lambda lib, a, b: lib.fmax(a, b) - lib.fmin(a, b), data((3, 4), "i"), data((4,), "i", seed=1))
    run(lambda lib, a, b: lib.heaviside(a, b), data((3, 4), "i"), data((3, 4), "i", seed=1))
    run(lambda lib, a, b: lib.heaviside(a, b), np.array([-1.0, 0.0, 2.0, np.nan], np.float32),
        np.array([5.0, 0.5, 7.0, 1.0], np.float32), grad=False)
    run(lambda lib, a, b: a.div(b, rounding_mode="floor"), data((3, 4)), data((3, 4), "pos", seed=1), grad=False)


@pytest.mark.parametrize("expr", [
    lambda x: x.flip(0), lambda x: x.flip((1, 2)), lambda x: x.mT.flip(-1), lambda x: x.roll(2, 1),
    lambda x: x.roll((1, -1), (0, 2)), lambda x: x.roll(5), lambda x: x.cumsum(1), lambda x: x.cumsum(0),
    lambda x: x.mT.cumprod(2), lambda x: x.logcumsumexp(2), lambda x: x[:, 1:].flip(1).cumsum(-1)])
def test_flip_roll_scans(expr):
    run(lambda lib, x: expr(x), data((3, 4, 5)))


def test_int_scans_and_index_add_copy():
    run(lambda lib, x: x.cumsum(0) + x.cumprod(1), data((4, 3), "i"))
    idx = np.array([0, 2, 0, 1])
    run(lambda lib, a, s: a.index_add(1, lib.tensor(idx, device=a.device), s, alpha=2), data((3, 3)), data((3, 4), seed=1))
    run(lambda lib, a, s: a.index_copy(0, lib.tensor([2, 0], device=a.device), s), data((3, 4)), data((2, 4), seed=1))


@pytest.mark.parametrize("expr", [
    lambda lib, x: x.sort(1)[0], lambda lib, x: x.argsort(0, descending=True), lambda lib, x: x.topk(2, 1)[0],
    lambda lib, x: x.sort(dim=-1, descending=True, stable=True)[1], lambda lib, x: x.mT.sort(dim=1, stable=True)[1],
    lambda lib, x: x.kthvalue(2, 1)[0]])
def test_sorting(expr):
    x = np.array([[3.0, np.nan, 1.0, 1.0, -2.0], [0.5, 0.5, np.inf, -np.inf, 0.5], [2.0, 1.0, np.nan, 2.0, 0.0]],
                 np.float32)
    run(expr, x, grad=False)
    run(expr, data((4, 5), "i"), grad=False)
    run(lambda lib, x: expr(lib, x).float() if not x.is_floating_point() else expr(lib, x), data((3, 5)))


def test_a_view_written_back_into_its_own_buffer():
    """``c[i, j] += 1`` with tensor indices reads ``c[i, j]`` (a view of c's buffer), adds in place, and assigns it
    back into c: one dispatch would bind c's buffer for reading and writing, which WebGPU refuses."""
    def fn(lib, c, ii, jj):
        c = c.clone()
        for i, j in zip(ii, jj):
            c[i, j] += 1
        c[ii, jj] = c[jj, ii]  # advanced indexing: a gather then a scatter into the same buffer
        return c

    ii, jj = np.array([0, 1, 2, 1]), np.array([0, 1, 1, 1])
    run(fn, data((4, 4), "i"), ii, jj, grad=False)


@pytest.mark.parametrize("dim,size,step", [(0, 2, 1), (1, 3, 2), (-1, 1, 1), (1, 5, 5)])
def test_tensor_unfold_view_and_gradient(dim, size, step):
    def fn(lib, x):
        w = x.t().unfold(dim, size, step)  # strided input, overlapping windows
        return w * w.sum(-1, keepdim=True)

    run(fn, data((5, 4)))
