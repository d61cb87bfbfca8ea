# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# func, amp, testing, distributions, finfo/iinfo and linalg.LinAlgError: the stubs' return types, under mypy (with
# the plugin) and pyright alike; no line may be an error.
from typing import Any, Callable

from typing_extensions import assert_type

import shapetorch as st
from shapetorch import Size, Tensor, amp, distributions as D, func, linalg, testing


def loss(w: Tensor[Any, Any], x: Tensor[Any, Any]) -> Tensor[Any, Any]:
    return (w * x).sum()


def transforms(w: Tensor[Any, Any], x: Tensor[Any, Any]) -> None:
    g = func.grad(loss)
    assert_type(g(w, x), Any)
    gv = func.grad_and_value(loss, argnums=(0, 1))
    assert_type(gv(w, x), tuple[Any, Any])
    assert_type(func.jacrev(loss)(w, x), Any)
    assert_type(func.vmap(loss, in_dims=(None, 0)), Callable[..., Any])
    assert_type(func.jvp(lambda t: t.sin(), (w,), (x,)), tuple[Any, ...])
    params, buffers = func.stack_module_state([st.nn.Linear(2, 2), st.nn.Linear(2, 2)])
    assert_type(params, dict[str, Tensor[Any, Any]])
    assert_type(func.functional_call(st.nn.Linear(2, 2), dict(params), (x,)), Any)


def mixed_precision(x: Tensor[Any, Any]) -> None:
    assert_type(amp.is_autocast_available("cpu"), bool)
    with amp.autocast(device_type="cpu", dtype=st.bfloat16) as ctx:
        assert_type(ctx, amp.autocast)
    scaler = amp.GradScaler("cpu")
    assert_type(scaler.scale(x), Tensor[Any, Any])
    assert_type(scaler.get_scale(), float)
    assert_type(scaler.is_enabled(), bool)
    assert_type(scaler.state_dict(), dict[str, Any])
    assert_type(testing.assert_close(x, x, rtol=1e-5, atol=1e-8), None)


def limits() -> None:
    assert_type(st.finfo(st.float32).eps, float)
    assert_type(st.finfo().tiny, float)
    assert_type(st.iinfo(st.int8).max, int)
    assert_type(st.iinfo(st.int64).bits, int)
    a: Tensor[Any, st.float64] = st.eye(3, dtype=st.float64)
    P, L, U = linalg.lu(a)
    assert_type(U, Tensor[Any, st.float64])
    assert_type(linalg.lu_factor(a).pivots, Tensor[Any, Any])
    assert_type(linalg.lu_solve(*linalg.lu_factor(a), a), Tensor[Any, st.float64])
    assert_type(linalg.solve_ex(a, a).result, Tensor[Any, st.float64])
    assert_type(linalg.ldl_factor_ex(a).info, Tensor[Any, Any])
    assert_type(linalg.tensorsolve(a, a[0]), Tensor[Any, st.float64])
    try:
        linalg.inv(st.zeros(2, 2))
    except linalg.LinAlgError as e:
        assert_type(e.code, str)


def distributions(loc: Tensor[Any, Any]) -> None:
    d = D.Normal(loc, 1.0)
    assert_type(d.loc, Tensor[Any, Any])
    assert_type(d.rsample((3,)), Tensor[Any, Any])
    assert_type(d.log_prob(loc), Tensor[Any, Any])
    assert_type(d.batch_shape, Size)
    lr = D.LowRankMultivariateNormal(loc, cov_factor=st.ones(3, 1), cov_diag=st.ones(3))
    assert_type(lr.cov_diag, Tensor[Any, Any])
    assert_type(D.kl_divergence(d, D.Normal(0.0, 2.0)), Tensor[Any, Any])
    g = D.Gamma(2.0, 1.0)
    assert_type(g.has_rsample, bool)
    t = D.TransformedDistribution(d, [D.ExpTransform(), D.AffineTransform(0.0, 2.0)])
    assert_type(t.sample(), Tensor[Any, Any])

    @D.register_kl(D.Gamma, D.Gamma)
    def kl_gamma(p: D.Gamma, q: D.Gamma) -> Tensor[Any, Any]:
        return p.rate - q.rate

    assert_type(kl_gamma(g, g), Tensor[Any, Any])  # the decorator keeps the function's type
