"""Random numbers drawn on the WebGPU device (Philox4x32-10 in WGSL, a pure function of seed, offset and element
index). Their bits cannot match torch's (nor the CPU's PCG64), so the tests check distributions (moments and a
Kolmogorov-Smirnov bound at a fixed seed), seeding (manual_seed repeats a run; each call differs), the per-device
generator, nothing uploaded, the device-side probability check, and dropout's mask in forward and backward.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import shapetorch as st
from test_webgpu import (
    DEV,
    webgpu,  # noqa: F401  (the module fixture: skip or fail without an adapter)
)

F = st.nn.functional
N = 40_000
KS_1PCT = 1.63 / math.sqrt(N)  # the Kolmogorov-Smirnov distance exceeded with probability 1% by a true sample


def _ks(sample: np.ndarray, cdf) -> float:
    x = np.sort(sample.astype(np.float64).ravel())
    n = x.size
    c = cdf(x)
    return float(max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n)))


def _normal_cdf(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def _host(t: st.Tensor) -> np.ndarray:
    assert t.device == st.device(DEV)
    return t.cpu().numpy()


def _uploaded() -> int:
    st.synchronize()
    return st.memory_stats()["num_bytes_uploaded"]


def test_rand_is_uniform():
    st.manual_seed(1)
    u = _host(st.rand(N, device=DEV))
    assert u.dtype == np.float32 and u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / N)
    assert abs(u.var() - 1 / 12) < 0.003
    assert _ks(u, lambda x: np.clip(x, 0, 1)) < KS_1PCT
    # neighbours are independent: the lag-1 correlation of a true sample is ~N(0, 1/N)
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 5 / math.sqrt(N)


def test_randn_is_standard_normal():
    st.manual_seed(2)
    z = _host(st.randn(200, 200, device=DEV))
    assert z.shape == (200, 200) and np.isfinite(z).all()
    assert abs(z.mean()) < 5 / math.sqrt(N)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / N)
    assert _ks(z, _normal_cdf) < KS_1PCT


@pytest.mark.parametrize("make,cdf,mean,var", [
    (lambda: st.normal(2.0, 3.0, (N,), device=DEV), lambda x: _normal_cdf((x - 2) / 3), 2.0, 9.0),
    (lambda: st.empty(N, device=DEV).uniform_(-2.0, 6.0), lambda x: np.clip((x + 2) / 8, 0, 1), 2.0, 64 / 12),
    (lambda: st.empty(N, device=DEV).normal_(-1.0, 0.5), lambda x: _normal_cdf((x + 1) / 0.5), -1.0, 0.25),
    (lambda: st.normal(st.full((N,), 1.0, device=DEV), 2.0), lambda x: _normal_cdf((x - 1) / 2), 1.0, 4.0),
    (lambda: st.randn_like(st.zeros(N, device=DEV)), _normal_cdf, 0.0, 1.0),
])
def test_parametrized_draws(make, cdf, mean, var):
    st.manual_seed(3)
    x = _host(make())
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)
    assert abs(x.var() / var - 1) < 5 * math.sqrt(2 / N)
    assert _ks(x, cdf) < KS_1PCT


def test_float16_uniform_never_rounds_to_one():
    from shapetorch.backends.webgpu.runtime import RT

    if not RT.has_f16:
        pytest.skip("this adapter has no shader-f16")
    st.manual_seed(4)
    u = _host(st.rand(N, dtype=st.float16, device=DEV))
    assert u.dtype == np.float16 and u.min() >= 0 and u.max() < 1
    assert _ks(u, lambda x: np.clip(x, 0, 1)) < KS_1PCT + 2 ** -11


def test_bernoulli_frequencies_follow_the_probabilities():
    st.manual_seed(5)
    probs = np.array([0.0, 0.1, 0.5, 0.9, 1.0], dtype=np.float32)
    p = st.tensor(np.tile(probs, (8000, 1)), device=DEV)
    b = _host(st.bernoulli(p))
    assert b.dtype == np.float32 and set(np.unique(b)) <= {0.0, 1.0}
    freq = b.mean(0)
    assert freq[0] == 0 and freq[-1] == 1
    np.testing.assert_array_less(np.abs(freq - probs), 5 * np.sqrt(probs * (1 - probs) / 8000) + 1e-9)
    s = _host(st.bernoulli(st.zeros(N, device=DEV), 0.25))  # a scalar p
    assert abs(s.mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / N)
    t = _host(st.zeros(N, dtype=st.int64, device=DEV).bernoulli_(0.75))  # in place, an integer tensor
    assert t.dtype == np.int64 and set(np.unique(t)) == {0, 1} and abs(t.mean() - 0.75) < 0.011
    q = _host(st.zeros(8000, 5, device=DEV).bernoulli_(st.tensor(probs, device=DEV)))  # a broadcast tensor p
    np.testing.assert_array_less(np.abs(q.mean(0) - probs), 5 * np.sqrt(probs * (1 - probs) / 8000) + 1e-9)


@pytest.mark.parametrize("bad", [1.5, -0.25, float("nan")])
def test_bernoulli_probability_checked_on_the_device(bad):
    """As the CPU (and torch): the same coded error, raised at the next sync instead of at the call."""
    p = st.tensor([0.5, bad, 0.2], device=DEV)
    out = st.bernoulli(p)  # recorded, not checked yet
    with pytest.raises(RuntimeError) as e:
        out.sum().item()
    assert e.value.code == "argument_error_invalid"
    assert st.bernoulli(st.tensor([0.5, 0.2], device=DEV)).shape == (2,)  # the runtime goes on
    with pytest.raises(RuntimeError):
        torch.bernoulli(torch.tensor([0.5, bad, 0.2]))
    with pytest.raises(RuntimeError) as e:
        st.zeros(3, device=DEV).bernoulli_(bad)
    assert e.value.code == "argument_error_invalid"


def test_seeding_repeats_and_calls_differ():
    st.manual_seed(7)
    a, b = _host(st.rand(1000, device=DEV)), _host(st.randn(1000, device=DEV))
    st.manual_seed(7)
    a2, b2 = _host(st.rand(1000, device=DEV)), _host(st.randn(1000, device=DEV))
    np.testing.assert_array_equal(a, a2)
    np.testing.assert_array_equal(b, b2)
    c = _host(st.rand(1000, device=DEV))  # the next call draws from a new offset
    assert not np.any(a == c)  # (a float32 coincidence has chance ~1000 * 1000 / 2**24 over all pairs; same index: ~0)
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.15
    st.manual_seed(8)
    assert not np.any(_host(st.rand(1000, device=DEV)) == a)
    # the prefix of a longer draw is not the shorter draw: element i depends on (seed, offset, i) only
    st.manual_seed(7)
    np.testing.assert_array_equal(_host(st.rand(10, device=DEV)), a[:10])


def test_device_generator():
    """A Generator of the device: its own seed and offset; get_state/set_state restore them; a CPU generator is
    refused for a device draw, as torch refuses one for a CUDA draw."""
    g = st.Generator(device=DEV).manual_seed(11)
    st.manual_seed(0)
    x = _host(st.rand(500, generator=g, device=DEV))
    st.manual_seed(1)  # does not touch g
    y = _host(st.rand(500, generator=g, device=DEV))
    assert not np.any(x == y)
    state = g.get_state()
    z = _host(st.randn(500, generator=g, device=DEV))
    g.set_state(state)
    np.testing.assert_array_equal(_host(st.randn(500, generator=g, device=DEV)), z)
    g.manual_seed(11)
    np.testing.assert_array_equal(_host(st.rand(500, generator=g, device=DEV)), x)
    with pytest.raises(RuntimeError) as e:
        st.rand(3, generator=st.Generator(), device=DEV)
    assert e.value.code == "device_error_requires"


def test_nothing_uploaded():
    x = st.ones(64, 64, device=DEV, requires_grad=True)
    before = _uploaded()
    st.rand(100, device=DEV)
    st.randn(10, 10, device=DEV)
    st.bernoulli(st.full((5,), 0.5, device=DEV))
    F.dropout(x, 0.3).sum().backward()
    assert _uploaded() == before


@pytest.mark.parametrize("name,p", [("dropout", 0.3), ("dropout", 0.75), ("dropout1d", 0.4), ("dropout2d", 0.5)])
def test_dropout_mask_scaling_and_gradient(name, p):
    """Kept elements are scaled by 1 / (1 - p) (as torch), about 1 - p of them are kept, and the backward uses the
    forward's mask: the gradient is g / (1 - p) exactly where the output kept the input, 0 elsewhere."""
    st.manual_seed(12)
    shape = (16, 32, 5, 8) if name == "dropout2d" else (16, 32, 40)  # (N, C, H, W) / (N, C, L): a draw per (n, c)
    a = np.random.default_rng(0).uniform(0.5, 1.5, size=shape).astype(np.float32)  # nonzero everywhere
    x = st.tensor(a, device=DEV, requires_grad=True)
    y = getattr(F, name)(x, p)
    g = np.random.default_rng(1).normal(size=a.shape).astype(np.float32)
    (y * st.tensor(g, device=DEV)).sum().backward()
    out, grad = _host(y.detach()), _host(x.grad)
    kept = out != 0
    np.testing.assert_allclose(out[kept], a[kept] / (1 - p), rtol=1e-6)
    np.testing.assert_array_equal(grad != 0, kept & (g != 0))
    np.testing.assert_allclose(grad[kept], g[kept] / (1 - p), rtol=1e-6)
    if name == "dropout":
        assert abs(kept.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / kept.size)
    else:  # one draw per (sample, channel): the mask is constant over the rest
        per = kept.reshape(16, 32, -1)
        assert np.all(per.all(-1) | ~per.any(-1))
        assert abs(per[..., 0].mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / (16 * 32))
    # inference: the identity
    np.testing.assert_array_equal(_host(getattr(F, name)(x, p, training=False).detach()), a)


def test_runtimes_doc_lists_the_primitives_without_a_kernel():
    """docs/runtimes.md's list of primitives without a WebGPU kernel is the backend's (``to_device`` is the move)."""
    import pathlib
    import re

    from shapetorch.backends.webgpu import backend

    text = (pathlib.Path(__file__).parent.parent / "docs" / "runtimes.md").read_text()
    para = text.split("Primitives without a WebGPU kernel", 1)[1].split("\n\n", 1)[0]
    listed = set(re.findall(r"`([A-Za-z0-9_]+)`", para.split("checks this list):", 1)[1].split("So on WebGPU")[0]))
    assert listed == set(backend.MISSING) - {"to_device"}
    count = re.search(r"\((\d+) of (\d+);", para)
    assert count is not None and int(count.group(1)) == len(listed)


def test_vmap_randomness_same_replays_device_draws():
    """vmap(randomness="same") gives every sample the same draws on the device too (the device generator's
    offset is restored per sample, as the CPU's state is); "different" gives each its own."""
    x = st.zeros(4, 50, device=DEV)
    same = _host(st.vmap(lambda r: r + st.rand(50, device=DEV), randomness="same")(x))
    assert np.all(same == same[0])
    diff = _host(st.vmap(lambda r: r + st.rand(50, device=DEV), randomness="different")(x))
    assert not np.any(diff[0] == diff[1])


@pytest.mark.parametrize("make,low,high,dtype", [
    (lambda: st.randint(-5, 7, (N,), device=DEV), -5, 7, st.int64),
    (lambda: st.randint(3, (N,), device=DEV, dtype=st.float32), 0, 3, st.float32),
    (lambda: st.randint(0, 2**31 - 1, (N,), device=DEV, dtype=st.int32), 0, 2**31 - 1, st.int32),
    (lambda: st.empty(N, device=DEV).random_(1, 9), 1, 9, st.float32),
    (lambda: st.empty(N, device=DEV, dtype=st.int64).random_(-3, 4), -3, 4, st.int64),
    (lambda: st.randint_like(st.zeros(N, device=DEV), 10), 0, 10, st.float32),
])
def test_integer_draws_on_the_device(make, low, high, dtype):
    """randint, random_ and randint_like draw on the device (nothing uploaded): the dtype and range asked for,
    every value about equally often (a chi-square bound for small ranges, the CDF for a wide one)."""
    st.manual_seed(5)
    before = _uploaded()
    t = make()
    assert _uploaded() == before
    assert t.dtype == dtype
    x = _host(t).astype(np.int64)
    assert x.min() >= low and x.max() < high
    if high - low < 100:
        counts = np.bincount(x - low, minlength=high - low)
        expect = N / (high - low)
        chi2 = float(((counts - expect) ** 2 / expect).sum())
        assert chi2 < (high - low - 1) + 6 * math.sqrt(2 * (high - low - 1))
    else:
        assert _ks(x, lambda v: (v - low + 1) / (high - low)) < KS_1PCT
    st.manual_seed(5)
    np.testing.assert_array_equal(_host(make()).astype(np.int64), x)  # seeded: the same draw


def test_exponential_on_the_device_and_int32_bounds():
    st.manual_seed(6)
    before = _uploaded()
    e = _host(st.empty(N, device=DEV).exponential_(2.0))
    assert _uploaded() == before
    assert e.min() >= 0 and np.isfinite(e).all()
    assert abs(e.mean() - 0.5) < 5 * 0.5 / math.sqrt(N)
    assert _ks(e, lambda v: 1 - np.exp(-2.0 * v)) < KS_1PCT
    with pytest.raises(st.DTypeError) as info:  # WebGPU stores int64 as int32: a bound outside it is refused
        st.randint(0, 2**40, (3,), device=DEV)
    assert info.value.code == "method_dtype_not_supported_error"


def _reads() -> int:
    return st.memory_stats()["num_readbacks"]


def test_randperm_on_the_device():
    """Random keys sorted with their positions by a bitonic network on the device: a permutation of every size
    (powers of two and not), uniform over positions, seeded, nothing uploaded or read back."""
    st.synchronize()
    up, reads = _uploaded(), _reads()
    perms = {n: st.randperm(n, device=DEV) for n in (0, 1, 2, 5, 64, 1000, 70_001)}
    assert _uploaded() == up and _reads() == reads
    for n, p in perms.items():
        assert p.dtype == st.int64 and p.device == st.device(DEV)
        np.testing.assert_array_equal(np.sort(_host(p)), np.arange(n))
    counts = np.zeros((6, 6))
    for _ in range(600):
        q = _host(st.randperm(6, device=DEV))
        counts[np.arange(6), q] += 1
    # each of the 36 (element, place) cells has p = 1/6: 100 expected of 600, sd ~9.1
    assert np.abs(counts - 100).max() < 5 * 9.2
    st.manual_seed(5)
    a = _host(st.randperm(50, device=DEV))
    b = _host(st.randperm(50, device=DEV))
    st.manual_seed(5)
    np.testing.assert_array_equal(_host(st.randperm(50, device=DEV)), a)
    assert not np.array_equal(a, b)
    assert st.randperm(4, dtype=st.float32, device=DEV).dtype == st.float32


P_ROWS = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 2.0], [1.0, 1.0, 1.0, 1.0]], np.float32)


def test_multinomial_with_replacement_on_the_device():
    """Frequencies within 5 sd of the normalized weights; a weight of 0 is never drawn; nothing read back."""
    st.synchronize()
    reads = _reads()
    r = st.multinomial(st.tensor(P_ROWS, device=DEV), N, replacement=True)
    st.synchronize()
    assert _reads() == reads and r.dtype == st.int64 and tuple(r.shape) == (3, N)
    got = _host(r)
    want = P_ROWS / P_ROWS.sum(1, keepdims=True)
    for row, w in zip(got, want):
        freq = np.bincount(row, minlength=4) / N
        assert np.all(np.abs(freq - w) <= 5 * np.sqrt(w * (1 - w) / N) + 1e-12)
        assert np.all(freq[w == 0] == 0)
    assert tuple(st.multinomial(st.tensor(P_ROWS[0], device=DEV), 7, True).shape) == (7,)


def test_multinomial_without_replacement_on_the_device():
    """Distinct categories, weight-0 ones last; the first draw's frequencies follow the weights, the second's
    the weights of the rest (P(second = j) = sum_i p_i p_j / (1 - p_i), i != j)."""
    p = np.array([0.5, 0.3, 0.2, 0.0], np.float32)
    x = st.tensor(p, device=DEV)
    draws = np.stack([_host(st.multinomial(x, 4)) for _ in range(400)])
    assert all(sorted(d) == [0, 1, 2, 3] for d in draws) and np.all(draws[:, 3] == 3)
    rows = st.multinomial(st.tensor(np.tile(p, (N // 4, 1)), device=DEV), 2)
    got = _host(rows)
    assert np.all(got[:, 0] != got[:, 1])
    first = np.bincount(got[:, 0], minlength=4) / got.shape[0]
    second = np.bincount(got[:, 1], minlength=4) / got.shape[0]
    want2 = np.array([sum(p[i] * p[j] / (1 - p[i]) for i in range(4) if i != j) for j in range(4)])
    sd = np.sqrt(0.25 / got.shape[0])
    assert np.all(np.abs(first - p) < 5 * sd) and np.all(np.abs(second - want2) < 5 * sd)


@pytest.mark.parametrize("bad,replacement", [([1.0, -1.0], True), ([0.0, 0.0], True), ([1.0, math.nan], False),
                                             ([0.0, 0.0], False), ([math.inf, 1.0], True)])
def test_multinomial_values_checked_on_the_device(bad, replacement):
    r = st.multinomial(st.tensor(bad, device=DEV), 1, replacement)  # recorded, not checked yet
    with pytest.raises(RuntimeError) as e:
        r.cpu()
    assert e.value.code == "argument_error_invalid"
    with pytest.raises(RuntimeError, match="probability|multinomial"):  # torch raises at the call on the CPU
        torch.multinomial(torch.tensor(bad), 1, replacement)
    assert st.multinomial(st.tensor([0.0, 1.0], device=DEV), 2, True).tolist() == [1, 1]


@pytest.mark.parametrize("rate", [0.0, 0.3, 4.0, 9.99, 10.0, 37.5, 2500.0, 1e6])
def test_poisson_on_the_device(rate):
    """Mean and variance within 5 sd of the rate (the variance's sd is about rate * sqrt(2 / N)), the small-rate
    sampler's probabilities against the pmf, and the draws' dtype; nothing read back."""
    st.synchronize()
    reads = _reads()
    x = st.poisson(st.full((N,), rate, device=DEV))
    st.synchronize()
    assert _reads() == reads and x.dtype == st.float32
    got = _host(x).astype(np.float64)
    assert np.all(got == np.round(got)) and np.all(got >= 0)
    if rate == 0:
        assert np.all(got == 0)
        return
    assert abs(got.mean() - rate) < 5 * math.sqrt(rate / N)
    assert abs(got.var() - rate) < 5 * rate * math.sqrt(2 / N + 1 / (rate * N))
    if rate < 10:
        k = np.arange(12)
        pmf = np.exp(k * math.log(rate) - rate - np.array([math.lgamma(v + 1) for v in k]))
        freq = np.bincount(got.astype(np.int64), minlength=12)[:12] / N
        # 5 sd, and 3 counts for the rare cells (where a count of 1 is many sd of a normal approximation)
        assert np.all(np.abs(freq - pmf) < 5 * np.sqrt(pmf * (1 - pmf) / N) + 3 / N)


def test_poisson_rates_checked_on_the_device_and_seeded():
    r = st.poisson(st.tensor([1.0, -1.0], device=DEV))
    with pytest.raises(RuntimeError) as e:
        r.cpu()
    assert e.value.code == "argument_error_invalid" and "non-negative" in str(e.value)
    g = st.Generator(device=DEV)
    rates = st.tensor([[0.5, 3.0], [20.0, 400.0]], device=DEV, requires_grad=True)
    a = st.poisson(rates, generator=g.manual_seed(3))
    b = st.poisson(rates, generator=g.manual_seed(3))
    np.testing.assert_array_equal(_host(a.detach()), _host(b.detach()))
    a.sum().backward()  # torch's PoissonBackward: zeros
    np.testing.assert_array_equal(_host(rates.grad), np.zeros((2, 2), np.float32))
    with pytest.raises(RuntimeError) as e:
        st.poisson(rates, generator=st.Generator())
    assert e.value.code == "device_error_requires"


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2)])
def test_orthogonal_and_dirac_init_of_a_webgpu_weight(shape) -> None:
    # orthogonal_ draws and factorises in float64, which WebGPU lacks: on the CPU, then copied in (a program
    # with the default device "webgpu" raised DTypeNotSupportedError)
    w = st.empty(*shape, device=DEV)
    st.nn.init.orthogonal_(w, gain=0.5)
    flat = _host(w).reshape(shape[0], -1)
    gram = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    np.testing.assert_allclose(gram, 0.25 * np.eye(len(gram)), atol=1e-5)
    if len(shape) == 3:
        d = st.empty(*shape, device=DEV)
        st.nn.init.dirac_(d)
        want = torch.nn.init.dirac_(torch.empty(*shape))
        np.testing.assert_array_equal(_host(d), want.numpy())
