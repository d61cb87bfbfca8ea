"""The WebGPU GEMM against torch (CPU): many shapes and layouts drawn by hypothesis (odd sizes, K not a multiple of
the K step, batch broadcasting, transposed, strided and offset views, 1-D operands, empty dims, float16, int),
values and gradients; the load modes the kernel picks (so ``x @ W.T`` and ``g.T @ x`` are read in place), split-K,
the bias and activation epilogue, the tile sizes the adapter's limits give, and the convolution's input gradient.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as hs

import shapetorch as st
import shapetorch.nn.functional as F
from test_webgpu import DEV, data, run, webgpu  # noqa: F401  (the module fixture skips or fails without WebGPU)

# sizes around the 64-wide tiles and the 4-wide vectors: 1, 3, 4, 63, 64, 65, ...
SIZES = hs.one_of(hs.integers(1, 9), hs.sampled_from([12, 16, 31, 60, 63, 64, 65, 67, 100, 128, 129]))


@pytest.fixture
def rt():
    from shapetorch.backends.webgpu.runtime import RT

    st.synchronize()
    return RT


def _operand(shape: tuple[int, ...], transposed: bool, offset: bool, step: bool, seed: int):
    """A (.., r, c) operand as a view: stored transposed, starting one element in, or every other column, so
    that the kernel sees unit, odd and transposed strides and unaligned offsets."""
    r, c = shape[-2:]
    store = (*shape[:-2], c, r) if transposed else shape
    store = (*store[:-1], store[-1] * (2 if step else 1) + (1 if offset else 0))
    base = data(store, seed=seed)

    def view(x):
        x = x[..., 1:] if offset else x
        x = x[..., ::2] if step else x
        return x.transpose(-1, -2) if transposed else x

    return base, view


@settings(max_examples=30, deadline=None)
@given(m=SIZES, n=SIZES, k=SIZES, batch=hs.sampled_from([((), ()), ((2,), ()), ((), (3,)), ((2, 1), (3,)), ((1,), (2,))]),
       layout=hs.tuples(hs.booleans(), hs.booleans(), hs.booleans(), hs.booleans(), hs.booleans(), hs.booleans()))
def test_matmul_shapes_and_layouts_match_torch(m, n, k, batch, layout):
    ta, oa, sa, tb, ob, sb = layout
    a, va = _operand((*batch[0], m, k), ta, oa, sa, 1)
    b, vb = _operand((*batch[1], k, n), tb, ob, sb, 2)
    run(lambda lib, a, b: va(a) @ vb(b), a, b, tol=(1e-4, 1e-4))


@settings(max_examples=15, deadline=None)
@given(k=SIZES, n=SIZES, left=hs.booleans())
def test_matmul_with_vectors(k, n, left):
    if left:
        run(lambda lib, a, b: a @ b, data((k,)), data((2, k, n), seed=1), tol=(1e-4, 1e-4))
    else:
        run(lambda lib, a, b: a @ b.mT, data((n, k)), data((k,), seed=1)[None], tol=(1e-4, 1e-4))
    run(lambda lib, a, b: lib.dot(a, b), data((k,)), data((k,), seed=1), tol=(1e-4, 1e-4))


@pytest.mark.parametrize("sa,sb", [((0, 3), (3, 4)), ((3, 0), (0, 4)), ((3, 4), (4, 0)), ((0, 2, 3), (3, 5)),
                                   ((2, 3, 0), (2, 0, 5))])
def test_matmul_with_empty_dims(sa, sb):
    run(lambda lib, a, b: a @ b, data(sa), data(sb, seed=1))


@settings(max_examples=10, deadline=None)
@given(m=SIZES, n=SIZES, k=SIZES, nt=hs.booleans())
def test_matmul_float16_and_int(m, n, k, nt):
    from shapetorch.backends.webgpu.runtime import RT

    b = data((n, k) if nt else (k, n), seed=1)
    if RT.has_f16:
        a16, b16 = data((m, k)).astype(np.float16), b.astype(np.float16)
        got = st.tensor(a16, device=DEV) @ (st.tensor(b16, device=DEV).T if nt else st.tensor(b16, device=DEV))
        want = torch.tensor(a16) @ (torch.tensor(b16).T if nt else torch.tensor(b16))  # float16 in, float16 out
        assert got.dtype == st.float16
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float32), want.float().numpy(),
                                   rtol=2e-2, atol=2e-2 * np.sqrt(k))
    ai, bi = data((m, k), "i"), data((n, k) if nt else (k, n), "i", seed=1)
    run(lambda lib, a, b: a @ (b.T if nt else b), ai, bi)


def _gemm_modes(monkeypatch):
    """The (A, B) load modes of each GEMM recorded while the patch is on."""
    from shapetorch.backends.webgpu import kernels

    seen: list[tuple[str, str]] = []
    real = kernels._gemm

    def spy(*args, **kw):
        seen.append(args[9])
        return real(*args, **kw)

    monkeypatch.setattr(kernels, "_gemm", spy)
    monkeypatch.setattr(kernels, "_MM_PLANS", {})  # a product planned by an earlier test would skip ``_gemm``
    return seen


def test_linear_and_its_weight_gradient_read_contiguous_vectors(rt, monkeypatch):
    """x @ W.T reads W along k (vec4, no transposed copy); the weight gradient g.T @ x reads g along m; the input
    gradient g @ W reads W along n. Each is one dispatch."""
    seen = _gemm_modes(monkeypatch)
    x = st.tensor(data((32, 20)), device=DEV, requires_grad=True)
    w = st.tensor(data((12, 20), seed=1), device=DEV, requires_grad=True)
    st.synchronize()
    before = st.memory_stats()["num_dispatches"]
    y = F.linear(x, w)
    st.synchronize()
    assert st.memory_stats()["num_dispatches"] == before + 1
    assert seen == [("vk", "vk")]
    y.backward(st.ones_like(y))
    assert sorted(seen[1:]) == [("vk", "vn"), ("vm", "vn")]
    # odd strides fall back to scalars along the shorter stride
    seen.clear()
    st.tensor(data((5, 7)), device=DEV) @ st.tensor(data((7, 3)), device=DEV)
    st.tensor(data((7, 5)), device=DEV).T @ st.tensor(data((3, 7)), device=DEV).T
    assert seen == [("sk", "sn"), ("sm", "sk")]


@pytest.mark.parametrize("m,k,n", [(3, 70001, 2), (1, 40000, 5), (70, 9000, 33)])
def test_long_k_is_split_and_summed_in_a_second_pass(m, k, n, rt):
    """K = 70,001 in one workgroup is beyond what lavapipe computes correctly (its results go wrong past K of
    about 55,000); split K keeps every slice at most MM_MAX_SLICE long, so this runs on the device."""
    from shapetorch.backends.webgpu import kernels

    splits, _ = kernels._mm_split(k, -(-n // 64) * -(-m // 64), m * n, 16)
    assert splits > 1
    a, b = st.tensor(data((m, k)), device=DEV), st.tensor(data((k, n), seed=1), device=DEV)
    st.synchronize()
    before = st.memory_stats()["num_dispatches"]
    got = (a @ b).cpu().numpy()
    assert st.memory_stats()["num_dispatches"] == before + 2  # the partial sums, then their sum
    want = data((m, k)).astype(np.float64) @ data((k, n), seed=1).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.sqrt(k / 1000))
    run(lambda lib, a, b: a @ b, data((m, k))[:, :5000], data((k, n), seed=1)[:5000], tol=(1e-4, 1e-3))


@pytest.mark.parametrize("act", ["", "relu", "gelu"])
@pytest.mark.parametrize("shape", [(5, 7, 3), (70, 20, 130), (3, 9000, 4)])  # the last one is split
def test_bias_and_activation_epilogue(act, shape, rt):
    from shapetorch.backends.webgpu import kernels

    m, k, n = shape
    x, w, b = data((m, k)), data((n, k), seed=1), data((n,), seed=2)
    wx, ww, wb = (st.tensor(v, device=DEV)._data for v in (x, w, b))
    out = np.asarray(kernels.matmul_bias_kernel(wx, kernels.permute_kernel(ww, (1, 0)), wb, act))
    want = torch.tensor(x) @ torch.tensor(w).T + torch.tensor(b)
    want = {"": want, "relu": torch.relu(want), "gelu": torch.nn.functional.gelu(want)}[act]
    np.testing.assert_allclose(out, want.numpy(), rtol=1e-4, atol=1e-4 * np.sqrt(k))


def test_tile_sizes_follow_the_workgroup_memory_limit(rt, monkeypatch):
    from shapetorch.backends.webgpu import kernels

    monkeypatch.setattr(rt, "max_wg_storage", 16384)  # WebGPU's default limit
    assert kernels._mm_tiles("f32", 70, 66) == (64, 64, 8, 8, 8) and kernels._mm_tiles("f16", 70, 66)[2] == 16
    assert kernels._mm_tiles("f32", 130, 140) == (64, 64, 8, 8, 8)  # 128-wide padded tiles need 16.5 KiB
    monkeypatch.setattr(rt, "max_wg_storage", 8192)  # below the limit WebGPU guarantees: smaller K steps
    assert kernels._mm_tiles("f32", 130, 140) == (64, 64, 4, 8, 8)
    run(lambda lib, a, b: a @ b.T, data((130, 45)), data((140, 45), seed=1), tol=(1e-4, 1e-4))
    monkeypatch.setattr(rt, "max_wg_storage", 32768)
    assert kernels._mm_tiles("f32", 70, 66)[2] == 16 and kernels._mm_tiles("f16", 70, 66)[2] == 32
    assert kernels._mm_tiles("f32", 130, 140) == (128, 128, 8, 8, 8) and kernels._mm_tiles("f16", 130, 140)[2] == 16
    monkeypatch.setattr(rt, "max_invocations", 128)
    assert kernels._mm_tiles("f32", 130, 140)[:2] == (64, 64)
    monkeypatch.undo()
    for sa, sb in (((130, 45), (140, 45)), ((2, 129, 33), (33, 257)), ((200, 16), (16, 128))):  # 128-wide tiles
        run(lambda lib, a, b: a @ b.mT if a.ndim == 2 and b.shape[0] != a.shape[-1] else a @ b, data(sa),
            data(sb, seed=1), tol=(1e-4, 1e-4))


def test_workgroups_fold_over_three_grid_dims(rt, monkeypatch):
    """5 x 2 x 3 = 30 workgroups on a grid of at most 4 per dimension (the real limit, 65,535, would need more
    workgroups than lavapipe runs in a test's time)."""
    monkeypatch.setattr(rt, "max_groups", 4)
    run(lambda lib, a, b: a @ b, data((5, 70, 3)), data((3, 150), seed=1), grad=False)  # (elementwise grids do not fold in z)


CONV = hs.tuples(
    hs.integers(1, 3),  # spatial dims
    hs.integers(1, 2), hs.integers(1, 3), hs.integers(1, 3),  # batch, groups, channels per group (in)
    hs.integers(1, 3),  # channels per group (out)
    hs.integers(1, 3), hs.integers(1, 3), hs.integers(0, 2), hs.integers(1, 2),  # kernel, stride, padding, dilation
    hs.integers(3, 7),  # input size
)


@settings(max_examples=25, deadline=None)
@given(CONV)
def test_convolution_input_gradient_matches_torch(p):
    nd, n, g, cg, og, k, s, pad, dil, size = p
    sizes = tuple(size - i for i in range(nd))
    if min(sizes) + 2 * pad - dil * (k - 1) - 1 < 0:
        return  # no output: torch raises, as shapetorch does (tested in test_nn_functional)
    conv = {1: "conv1d", 2: "conv2d", 3: "conv3d"}[nd]
    x = data((n, g * cg, *sizes))
    w = data((g * og, cg, *[k] * nd), seed=1)
    run(lambda lib, x, w: getattr(lib.nn.functional, conv)(x, w, stride=s, padding=pad, dilation=dil, groups=g),
        x, w, tol=(1e-4, 1e-4))


def test_convolution_input_gradient_is_one_dispatch_and_no_columns(rt):
    """F.conv_transpose2d is the input gradient's kernel: one GEMM dispatch, and nothing allocated but the result."""
    g = st.tensor(data((2, 8, 30, 30)), device=DEV)
    w = st.tensor(data((8, 4, 5, 5), seed=1), device=DEV)
    st.synchronize()
    # (an empty pool: a free buffer of up to twice the result's size class, left by earlier tests, could serve it)
    st.empty_cache()
    st.reset_peak_memory_stats("webgpu")
    base, before = st.memory_allocated("webgpu"), st.memory_stats()["num_dispatches"]
    y = F.conv_transpose2d(g, w, padding=2)
    st.synchronize()
    assert st.memory_stats()["num_dispatches"] == before + 1
    assert st.max_memory_allocated("webgpu") - base <= 2 * 4 * 30 * 30 * 4 * 2  # the result (its pooled size)
    want = torch.nn.functional.conv_transpose2d(torch.tensor(data((2, 8, 30, 30))), torch.tensor(data((8, 4, 5, 5), seed=1)),
                                                padding=2)
    np.testing.assert_allclose(y.cpu().numpy(), want.numpy(), rtol=1e-4, atol=1e-4)


def test_a_repeated_product_reuses_its_launch_with_the_operands_new_offsets(rt):
    """A product of the shapes, strides and dtypes of an earlier one is recorded from that one's launch plan
    (no new plan is made), with this call's buffers and offsets: views at other offsets give their own products."""
    from shapetorch.backends.webgpu import kernels as K

    x, w, bias = data((6, 5, 7)), data((2, 4, 7), seed=1), data((3, 4), seed=2)
    X, W, B = (st.tensor(v, device=DEV) for v in (x, w, bias))
    plans = len(K._MM_PLANS)
    for i in range(4):
        j = i % 2
        got = F.linear(X[i:i + 3], W[j], B[i % 3])  # (3, 5, 7) @ (7, 4) + (4,): every operand at another offset
        want = torch.nn.functional.linear(*(torch.from_numpy(v) for v in (x[i:i + 3], w[j], bias[i % 3])))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose((X[i + 1] @ W[j].T).numpy(), x[i + 1] @ w[j].T, rtol=1e-5, atol=1e-5)
        if i == 0:
            plans = len(K._MM_PLANS)
        assert len(K._MM_PLANS) == plans  # found again, not made again


def _dispatches() -> int:
    return st.memory_stats()["num_dispatches"]


_ACTIVATIONS = {"relu": lambda lib, z: lib.nn.functional.relu(z), "gelu": lambda lib, z: lib.nn.functional.gelu(z),
                "tanh": lambda lib, z: z.tanh(), "ReLU": lambda lib, z: lib.nn.ReLU()(z)}
_INPLACE = {"relu_": lambda lib, z: z.relu_(), "ReLU(inplace)": lambda lib, z: lib.nn.ReLU(inplace=True)(z)}


@pytest.mark.parametrize("act", list(_ACTIVATIONS))
@pytest.mark.parametrize("bias,xshape", [(True, (6, 7)), (False, (6, 7)), (True, (2, 5, 7)), (True, (70, 130))])
def test_an_activation_of_a_product_joins_its_dispatch(act, bias, xshape, rt):
    """``act(linear(x, W, b))`` (and of ``x @ W.T``) is one dispatch, not two, its results as torch's: the
    activation, the pre-activation read afterwards (stored by the same dispatch, and saved by gelu's gradient),
    the gradients and the nodes' names; again through the launch plans (the kernels' third calls replay them)."""
    fn = _ACTIVATIONS[act]
    x, w, b = data(xshape), data((9, xshape[-1]), seed=1), data((9,), seed=2)

    def leaves(lib, dev):
        return [lib.tensor(v, device=dev, requires_grad=True) for v in (x, w, b)]

    tX, tW, tB = leaves(torch, "cpu")
    tz = torch.nn.functional.linear(tX, tW, tB if bias else None)
    ty = fn(torch, tz)
    (ty * ty + tz).sum().backward()
    cpu_name = F.linear(*leaves(st, "cpu")[:2 + bias]).grad_fn.name()
    for k in range(3):
        X, W, B = leaves(st, DEV)
        z = F.linear(X, W, B if bias else None)
        before = _dispatches()
        y = fn(st, z)
        assert _dispatches() == before, k  # (the product's dispatch recorded again, with both outputs)
        # (the product's node as on the CPU, torch's name: AddmmBackward0, or ViewBackward0 for a stack of rows)
        assert y.grad_fn.name() == ty.grad_fn.name() and z.grad_fn.name() == cpu_name
        np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(z.detach().cpu().numpy(), tz.detach().numpy(), rtol=1e-5, atol=1e-5)
        (y * y + z).sum().backward()
        for got, want in ((X, tX), (W, tW), *(((B, tB),) if bias else ())):
            np.testing.assert_allclose(got.grad.cpu().numpy(), want.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("act", list(_INPLACE))
def test_an_in_place_activation_of_a_product(act, rt):
    """``relu_`` / ``ReLU(inplace=True)`` of a product: without autograd, the activation is the product's epilogue
    into its own output (one dispatch); with it (the old value is kept), values and gradients as torch's."""
    fn = _INPLACE[act]
    x, w, b = data((6, 7)), data((9, 7), seed=1), data((9,), seed=2)
    want = fn(torch, torch.nn.functional.linear(*(torch.tensor(v) for v in (x, w, b))))
    for k in range(3):
        with st.no_grad():
            z = F.linear(*(st.tensor(v, device=DEV) for v in (x, w, b)))
            before = _dispatches()
            y = fn(st, z)
        assert _dispatches() == before and y is z, k
        np.testing.assert_allclose(z.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    tX, tW, tB = (torch.tensor(v, requires_grad=True) for v in (x, w, b))
    ty = fn(torch, torch.nn.functional.linear(tX, tW, tB))
    (ty * ty).sum().backward()
    X, W, B = (st.tensor(v, device=DEV, requires_grad=True) for v in (x, w, b))
    y = fn(st, F.linear(X, W, B))
    assert y.grad_fn.name() == ty.grad_fn.name()
    (y * y).sum().backward()
    np.testing.assert_allclose(y.detach().cpu().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-5)
    for got, ref in ((X, tX), (W, tW), (B, tB)):
        np.testing.assert_allclose(got.grad.cpu().numpy(), ref.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case,count", [("submit between", 2), ("transposed", 2), ("rows", 2), ("op between", 3)])
def test_a_product_and_its_activation_apart_stay_two_dispatches(case, count, rt):
    """Where the activation's operand is not the held product's output itself -- a submit between them, a view of
    it, another op between them -- the activation runs as its own kernel, with the same results; so for a product
    of a vector (a view of its output) and a split-K product (two dispatches, whose last has no recipe)."""
    fns = {"submit between": lambda lib, z: (st.synchronize() if lib is st else None, lib.relu(z))[1],
           "transposed": lambda lib, z: lib.relu(z.t()), "rows": lambda lib, z: lib.relu(z[1:]),
           "op between": lambda lib, z: lib.relu(z + 1)}
    x, w, b = data((6, 7)), data((9, 7), seed=1), data((9,), seed=2)
    want = fns[case](torch, torch.nn.functional.linear(*(torch.tensor(v) for v in (x, w, b))))
    X, W, B = (st.tensor(v, device=DEV) for v in (x, w, b))
    st.synchronize()
    before = _dispatches()
    got = fns[case](st, F.linear(X, W, B))
    assert _dispatches() - before == count
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    run(lambda lib, a, v: (a @ v).relu(), w, data((7,)), tol=(1e-5, 1e-5))
    a, c = data((3, 9000)), data((9000, 4), seed=1)  # split K
    ref = torch.relu(torch.tensor(a, dtype=torch.float64) @ torch.tensor(c, dtype=torch.float64))
    A, C = st.tensor(a, device=DEV), st.tensor(c, device=DEV)
    st.synchronize()
    before = _dispatches()
    got = (A @ C).relu()
    assert _dispatches() == before + 3  # the partial sums, their sum, the activation
    np.testing.assert_allclose(got.cpu().numpy(), ref.numpy(), rtol=1e-4, atol=1e-3)


def test_an_activation_joins_a_float16_product(rt):
    """float16: the activation of the stored (rounded) pre-activation, as the activation's own kernel computes it."""
    if not rt.has_f16:
        pytest.skip("this adapter has no shader-f16")
    x, w, b = data((33, 20)), data((17, 20), seed=1), data((17,), seed=2)
    for name in ("relu", "gelu"):
        X, W, B = (st.tensor(v, device=DEV, dtype=st.float16) for v in (x, w, b))
        z = F.linear(X, W, B)
        before = _dispatches()
        y = getattr(F, name)(z)
        assert _dispatches() == before  # (joined: the product's dispatch recorded again)
        apart = getattr(F, name)(z.clone())
        np.testing.assert_array_equal(y.cpu().numpy(), apart.cpu().numpy())
