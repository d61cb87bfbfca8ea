"""shapetorch.linalg against torch.linalg: OpInfo samples (values, float64 gradients, error inputs), hypothesis
shapes for solve's broadcasting, torch's errors for singular and indefinite input, finfo/iinfo."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _opinfo_tables import errors, grads, with_error_inputs
from _opinfo_tables import values as sample_values
from _oracle import fast, seeds


def _lib(lib):
    return torch.linalg if lib is torch else st.linalg


def _f(name):
    return lambda lib, *a, **k: getattr(_lib(lib), name)(*a, **k)


def _svd_invariant(lib, *a, **k):
    """Singular values, the projector-like product U Vh and |U| (unique for distinct singular values)."""
    U, S, Vh = _lib(lib).svd(*a, **k)
    kk = S.shape[-1]
    return S, U[..., :kk] @ Vh[..., :kk, :], U[..., :kk].abs()


def _eigh_invariant(lib, *a, **k):
    w, V = _lib(lib).eigh(*a, **k)
    return w, V.abs()


def _eig_invariant(lib, *a, **k):
    w, V = _lib(lib).eig(*a, **k)
    return w, V.abs()


OPS = {f"linalg.{n}": _f(n) for n in (
    "inv", "inv_ex", "det", "slogdet", "solve", "solve_triangular", "cholesky", "cholesky_ex", "qr", "svdvals",
    "eigvalsh", "eigvals", "norm", "vector_norm", "matrix_norm", "matrix_rank", "pinv", "matrix_power", "cross",
    "multi_dot", "householder_product", "vander", "diagonal", "vecdot", "cond", "lstsq", "solve_ex", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve", "tensorinv", "tensorsolve")}
OPS["linalg.svd"] = _svd_invariant
OPS["linalg.eigh"] = _eigh_invariant
OPS["linalg.eig"] = _eig_invariant
OPS["matrix_exp"] = lambda lib, x: lib.matrix_exp(x)
OPS["logdet"] = lambda lib, x: lib.logdet(x)
OPS["cross"] = lambda lib, *a, **k: lib.cross(*a, **k)
OPS["pinverse"] = lambda lib, *a, **k: lib.pinverse(*a, **k)
OPS["linalg.lstsq"] = lambda lib, *a, **k: _lib(lib).lstsq(*a, **k)[0]  # the rest: a driver's by-products

TOL = (1e-4, 1e-4)
TOLS = {"matrix_exp": (1e-3, 1e-3)}  # entries of 1e4 next to entries of 0.1: torch's float32 loses those digits
NO_GRADS = {"linalg.matrix_rank", "linalg.inv_ex", "linalg.cholesky_ex", "linalg.vander", "linalg.eig",
            "linalg.ldl_factor", "linalg.ldl_factor_ex", "linalg.ldl_solve"}  # torch defines no derivative of LDL


def _skip_values(name):
    def skip(s):
        if name == "linalg.lstsq":  # torch's default driver on CPU is gelsy; an explicit other driver fills more
            return s.kwargs.get("driver") not in (None, "gelsy")
        if name == "linalg.cond" and s.kwargs.get("p") not in (None, 2, -2):
            return bool(torch.linalg.matrix_rank(s.input).lt(s.input.shape[-1]).any())
        return False

    return skip


@pytest.mark.parametrize("name", sorted(OPS))
def test_opinfo_samples(name):
    assert sample_values(name, OPS[name], dtypes=("float32", "complex64"), tol=TOLS.get(name, TOL),
                         skip=_skip_values(name)) > 0


@pytest.mark.parametrize("name", sorted(set(OPS) - NO_GRADS))
def test_opinfo_grads(name):
    grads(name, OPS[name], max_samples=3)


@pytest.mark.parametrize("name", with_error_inputs(sorted(OPS)))
def test_opinfo_error_inputs(name):
    assert errors(name, OPS[name]) > 0


# -- hypothesis: solve's broadcasting decides as torch's ---------------------------------------------------------

batch = hs.lists(hs.integers(1, 3), max_size=2).map(tuple)


@fast(30)
@given(ba=batch, bb=batch, n=hs.integers(1, 3), k=hs.integers(0, 3), vector=hs.booleans(), left=hs.booleans(),
       seed=seeds)
def test_solve_broadcasting(ba, bb, n, k, vector, left, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*ba, n, n)) + 3 * np.eye(n)
    b = rng.standard_normal((*bb, n) if vector else (*bb, k, n) if not left else (*bb, n, k))
    try:
        expected = torch.linalg.solve(torch.tensor(a), torch.tensor(b), left=left)
    except RuntimeError:
        with pytest.raises(st.ShapetorchError):
            st.linalg.solve(st.tensor(a), st.tensor(b), left=left)
        return
    got = st.linalg.solve(st.tensor(a), st.tensor(b), left=left)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-8, atol=1e-10)


# -- torch's errors ---------------------------------------------------------------------------------------------------

def test_singular_and_indefinite_errors():
    sing = np.array([[1.0, 2.0], [2.0, 4.0]])
    for fn in (lambda L, x: L.linalg.inv(x), lambda L, x: L.linalg.solve(x, x)):
        with pytest.raises(RuntimeError) as t:
            fn(torch, torch.tensor(sing))
        with pytest.raises(RuntimeError) as s:
            fn(st, st.tensor(sing))
        assert s.value.code == "linalg_error_singular"
        assert str(s.value).split(": ", 1)[1] == str(t.value).split(": ", 1)[1]
    indef = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 2.0], [0.0, 2.0, 1.0]])
    with pytest.raises(RuntimeError) as t:
        torch.linalg.cholesky(torch.tensor(indef))
    with pytest.raises(RuntimeError) as s:
        st.linalg.cholesky(st.tensor(indef))
    assert s.value.code == "linalg_error_not_positive_definite"
    assert str(s.value) == str(t.value)
    L, info = st.linalg.cholesky_ex(st.tensor(indef))
    assert info.item() == torch.linalg.cholesky_ex(torch.tensor(indef)).info.item()
    inv, info = st.linalg.inv_ex(st.tensor(sing))
    assert info.item() == torch.linalg.inv_ex(torch.tensor(sing)).info.item()


def test_inv_ex_of_a_batch_with_a_singular_matrix_is_torchs():
    """inv_ex is a solve with the identity, as torch's: the invertible matrices are inverted, a singular one gets
    LU's infinities/NaNs (it once turned the whole batch into NaN)."""
    a = np.array([np.eye(2) * 2, np.zeros((2, 2)), [[1.0, 2.0], [2.0, 4.0]]])
    got, want = st.linalg.inv_ex(st.tensor(a)), torch.linalg.inv_ex(torch.tensor(a))
    np.testing.assert_array_equal(got.inverse.numpy(), want.inverse.numpy())
    assert got.info.tolist() == want.info.tolist()


def test_integer_input_is_refused():
    with pytest.raises(RuntimeError):
        torch.linalg.inv(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(st.DTypeError):
        st.linalg.inv(st.ones(2, 2, dtype=st.int64))


def test_second_order_through_eigh_and_det():
    """Double backward works: the vjps are written in differentiable ops."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 3))
    a = a @ a.T + np.eye(3)
    outs = []
    for lib in (torch, st):
        x = lib.tensor(a, requires_grad=True)
        y = lib.linalg.eigvalsh(x).pow(3).sum() + lib.linalg.det(x)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        outs.append(gg.numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-8)


def test_forward_mode_solve():
    rng = np.random.default_rng(4)
    a, b, ta = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2)), rng.standard_normal((3, 3))
    _, t_out = torch.func.jvp(lambda x: torch.linalg.solve(x, torch.tensor(b)), (torch.tensor(a),), (torch.tensor(ta),))
    with st.autograd.forward_ad.dual_level():
        x = st.autograd.forward_ad.make_dual(st.tensor(a), st.tensor(ta))
        s_out = st.autograd.forward_ad.unpack_dual(st.linalg.solve(x, st.tensor(b))).tangent
    np.testing.assert_allclose(s_out.numpy(), t_out.numpy(), rtol=1e-10)


# -- finfo / iinfo ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"])
def test_finfo(name):
    t, s = torch.finfo(getattr(torch, name)), st.finfo(getattr(st, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
        assert getattr(s, attr) == getattr(t, attr), attr


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo(name):
    t, s = torch.iinfo(getattr(torch, name)), st.iinfo(getattr(st, name))
    assert (s.bits, s.min, s.max, s.dtype) == (t.bits, t.min, t.max, t.dtype)


def test_info_refuses_the_other_kind():
    assert st.finfo().eps == torch.finfo().eps
    for bad in ((st.finfo, st.int32), (st.iinfo, st.float32), (st.iinfo, st.bool)):
        with pytest.raises(TypeError):
            bad[0](bad[1])


# -- the functions added with LU, LDL and tensor solves: torch's errors and verdicts -----------------------------

_SING = np.array([[1.0, 2.0], [2.0, 4.0]])


def _both(fn):
    """(torch's exception, ours), or the results when both accept."""
    out = []
    for lib in (torch, st):
        try:
            out.append(fn(lib))
        except Exception as e:  # the verdict itself is what is compared
            out.append(e)
    return out


@pytest.mark.parametrize("case", [
    lambda L: L.linalg.lu_factor(L.tensor(np.stack([np.eye(2), _SING]))),
    lambda L: L.linalg.lu_factor(L.tensor(_SING)),
    lambda L: L.linalg.lu_factor_ex(L.tensor(_SING), check_errors=True),
    lambda L: L.linalg.lu_factor(L.tensor(np.eye(2)), pivot=False),
    lambda L: L.linalg.solve_ex(L.tensor(np.stack([np.eye(2), _SING])), L.tensor(np.ones((2, 1))), check_errors=True),
    lambda L: L.linalg.tensorinv(L.tensor(np.ones((4, 6, 8, 3))), ind=0),
    lambda L: L.linalg.tensorinv(L.tensor(np.ones((4, 6, 8, 3))), ind=1),
    lambda L: L.linalg.tensorinv(L.tensor(np.zeros((2, 2, 2, 2))), ind=2),
    lambda L: L.linalg.tensorsolve(L.tensor(np.ones((2, 3, 5))), L.tensor(np.ones((2, 3)))),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(np.eye(3))), L.tensor(np.ones(3))),
    lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(L.tensor(np.eye(3))), L.tensor(np.ones((4, 1)))),
    lambda L: L.linalg.ldl_factor(L.tensor(np.ones((3, 4)))),
    lambda L: L.linalg.ldl_solve(*L.linalg.ldl_factor(L.tensor(np.eye(3))), L.tensor(np.ones((4, 1)))),
    lambda L: L.linalg.lu_factor(L.tensor(np.ones((2, 2), dtype=np.int64))),
])
def test_new_linalg_errors_match_torch(case):
    theirs, ours = _both(case)
    assert isinstance(theirs, Exception) and isinstance(ours, st.ShapetorchError), (theirs, ours)
    assert isinstance(ours, RuntimeError)
    if isinstance(theirs, torch.linalg.LinAlgError):
        assert isinstance(ours, st.linalg.LinAlgError)
    if "U[" in str(theirs) or "Expected" in str(theirs) or "singular" in str(theirs):  # torch's own wording, kept
        assert str(theirs).endswith(str(ours).split(": ", 1)[1])


def test_singular_input_is_a_linalg_error_as_torch():
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(torch.tensor(_SING))
    with pytest.raises(st.linalg.LinAlgError) as e:
        st.linalg.inv(st.tensor(_SING))
    assert isinstance(e.value, st.ShapeError) and e.value.code == "linalg_error_singular"


@pytest.mark.parametrize(("b_shape", "left"), [((2, 1), True), ((2,), True), ((3, 1, 2, 2), False), ((4, 2), False)])
def test_solve_ex_and_lu_factor_ex_report_singular_matrices_as_torch(b_shape, left):
    a = np.stack([np.eye(2) * 2, _SING])
    b = np.random.default_rng(5).standard_normal(b_shape)
    ro = st.linalg.solve_ex(st.tensor(a), st.tensor(b), left=left)
    rt = torch.linalg.solve_ex(torch.tensor(a), torch.tensor(b), left=left)
    assert tuple(ro.info.shape) == tuple(rt.info.shape)  # A's batch shape, not the broadcast one
    np.testing.assert_array_equal(ro.info.numpy(), rt.info.numpy())
    np.testing.assert_allclose(ro.result.numpy(), rt.result.numpy())  # inf or nan where LU divides by zero, as torch
    fo, ft = st.linalg.lu_factor_ex(st.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    for x, y in zip(fo, ft, strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy())


def test_ldl_has_no_derivative_as_torch():
    a = np.eye(3) + 0.1
    with pytest.raises(RuntimeError, match="not implemented"):
        torch.linalg.ldl_factor(torch.tensor(a, requires_grad=True)).LD.sum().backward()
    with pytest.raises(st.AutogradError, match="not implemented"):
        st.linalg.ldl_factor(st.tensor(a, requires_grad=True)).LD.sum().backward()
    with pytest.raises(NotImplementedError, match="forward AD"):
        torch.func.jvp(lambda x: torch.linalg.ldl_factor(x).LD, (torch.tensor(a),), (torch.tensor(a),))
    with pytest.raises(NotImplementedError, match="forward AD"):
        st.func.jvp(lambda x: st.linalg.ldl_factor(x).LD, (st.tensor(a),), (st.tensor(a),))


@fast(20)
@given(m=hs.integers(1, 4), n=hs.integers(1, 4), batch=batch, seed=seeds)
def test_lu_and_its_gradient_match_torch_for_any_shape(m, n, batch, seed):
    """Square, wide and tall: P, L, U, the packed factors and pivots, and the gradient of L and U together."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, m, n))
    ao, at = st.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    po, pt = st.linalg.lu(ao), torch.linalg.lu(at)
    for x, y in zip(po, pt, strict=True):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert not po.P.requires_grad
    wl, wu = rng.standard_normal(tuple(pt.L.shape)), rng.standard_normal(tuple(pt.U.shape))
    ((po.L * st.tensor(wl)).sum() + (po.U * st.tensor(wu)).sum()).backward()
    ((pt.L * torch.tensor(wl)).sum() + (pt.U * torch.tensor(wu)).sum()).backward()
    np.testing.assert_allclose(ao.grad.numpy(), at.grad.numpy(), rtol=1e-7, atol=1e-9)
    fo, ft = st.linalg.lu_factor_ex(st.tensor(a)), torch.linalg.lu_factor_ex(torch.tensor(a))
    for x, y in zip(fo, ft, strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(("left", "adjoint"), [(True, False), (True, True), (False, False), (False, True)])
def test_lu_solve_all_four_equations_with_gradients(left, adjoint):
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((2, 3, 3)) + 2 * np.eye(3), rng.standard_normal((2, 3, 3))
    grads_ = []
    for lib in (torch, st):
        LU, piv = lib.linalg.lu_factor(lib.tensor(a))
        LU = LU.detach().requires_grad_(True)
        B = lib.tensor(b, requires_grad=True)
        x = lib.linalg.lu_solve(LU, piv, B, left=left, adjoint=adjoint)
        (x * lib.tensor(b)).sum().backward()
        grads_.append((x.detach().numpy(), LU.grad.numpy(), B.grad.numpy()))
    for o, t in zip(grads_[1], grads_[0], strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-9, atol=1e-11)


def test_tensorinv_and_tensorsolve_with_gradients():
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((4, 6, 8, 3)), rng.standard_normal((2, 3))
    a5 = rng.standard_normal((6, 2, 3))
    out = []
    for lib in (torch, st):
        A, A5, B = lib.tensor(a, requires_grad=True), lib.tensor(a5, requires_grad=True), lib.tensor(b)
        inv = lib.linalg.tensorinv(A, ind=2)
        x = lib.linalg.tensorsolve(A5, B, dims=(0,))
        (inv.sum() + x.sum()).backward()
        out.append([inv.detach().numpy(), x.detach().numpy(), A.grad.numpy(), A5.grad.numpy()])
    for o, t in zip(out[1], out[0], strict=True):
        assert o.shape == t.shape
        np.testing.assert_allclose(o, t, rtol=1e-8, atol=1e-10)


# -- forward mode: the factorizations' jvps against torch.func.jvp ----------------------------------------------

def _sign_fixed(lib, V):
    """Eigen-/singular vectors up to sign: each column scaled to make its largest entry positive."""
    idx = V.abs().argmax(-2, keepdim=True)
    return V * V.gather(-2, idx).sign()


JVP_CASES = {
    "cholesky": lambda lib, a: lib.linalg.cholesky(a),
    "cholesky_ex": lambda lib, a: lib.linalg.cholesky_ex(a).L,
    "qr": lambda lib, a: lib.linalg.qr(a).Q + lib.linalg.qr(a).R,
    "svdvals": lambda lib, a: lib.linalg.svdvals(a),
    "svd": lambda lib, a: _sign_fixed(lib, lib.linalg.svd(a).U) @ lib.linalg.svd(a).U.mT @ a,
    "eigh": lambda lib, a: _sign_fixed(lib, lib.linalg.eigh(a).eigenvectors) * lib.linalg.eigh(a).eigenvalues.unsqueeze(-2),
    "eigvalsh": lambda lib, a: lib.linalg.eigvalsh(a),
    "eigvals": lambda lib, a: lib.linalg.eigvals(a),
    "pinv": lambda lib, a: lib.linalg.pinv(a),
    "matrix_norm_nuc": lambda lib, a: lib.linalg.matrix_norm(a, "nuc"),
    "matrix_norm_2": lambda lib, a: lib.linalg.matrix_norm(a, 2),
    "cond": lambda lib, a: lib.linalg.cond(a),
    "lstsq": lambda lib, a: lib.linalg.lstsq(a, a[..., :2]).solution,
    "slogdet": lambda lib, a: lib.linalg.slogdet(a).logabsdet,
    "lu": lambda lib, a: lib.linalg.lu(a).L + lib.linalg.lu(a).U,
    "lu_factor": lambda lib, a: lib.linalg.lu_factor(a).LU,
    "lu_solve": lambda lib, a: lib.linalg.lu_solve(*lib.linalg.lu_factor(a), a[..., :2]),
    "solve_ex": lambda lib, a: lib.linalg.solve_ex(a, a[..., :1]).result,
    "tensorinv": lambda lib, a: lib.linalg.tensorinv(a[0], ind=1),
}


@pytest.mark.parametrize("name", sorted(JVP_CASES))
def test_forward_mode_matches_torch_func_jvp(name):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 3, 3))
    a = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(3)  # symmetric positive-definite: every case above is defined
    t = rng.standard_normal((2, 3, 3))
    t = t + np.swapaxes(t, -1, -2)
    f = JVP_CASES[name]
    _, tt = torch.func.jvp(lambda x: f(torch, x), (torch.tensor(a),), (torch.tensor(t),))
    _, so = st.func.jvp(lambda x: f(st, x), (st.tensor(a),), (st.tensor(t),))
    np.testing.assert_allclose(so.numpy(), tt.numpy(), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize(("shape", "ind"), [((4, 6, 8, 3), 2), ((4, 6, 8, 3), 1), ((4, 6, 8, 3), 0), ((2, 3, 6), 2),
                                            ((6, 2, 3), 1), ((5,), 1), ((2, 2), 3)])
def test_tensorinv_rule_decides_as_torch(shape, ind):
    """The rule (shared with the plugin) accepts and refuses as torch, with the shape torch gives."""
    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.matrix import tensorinv_shape

    try:
        expected = tuple(torch.linalg.tensorinv(torch.eye(math.prod(shape[:ind]) or 1).reshape(shape)
                                                if math.prod(shape[:ind]) ** 2 == math.prod(shape) else
                                                torch.ones(shape), ind=ind).shape)
    except RuntimeError:
        with pytest.raises(RuleError):
            tensorinv_shape(shape, ind)
        return
    assert tensorinv_shape(shape, ind) == expected


def test_lstsq_and_multi_dot_rule_shapes_match_torch():
    """The rules' result shapes (the checking mode does not cover these) against torch, accept and refuse."""
    import itertools

    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.matrix import lstsq_shape, multi_dot_shape

    def same(rule, want):
        try:
            expected = tuple(want().shape)
        except RuntimeError:
            with pytest.raises(RuleError):
                rule()
            return
        assert rule() == expected

    for a, b in itertools.product([(3, 2), (4, 3, 2)], [(3,), (3, 5), (4, 3, 5), (2,), (2, 5), (4, 2, 5)]):
        same(lambda a=a, b=b: lstsq_shape(a, b),
             lambda a=a, b=b: torch.linalg.lstsq(torch.randn(a), torch.randn(b)).solution)
    for shapes in [[(3,), (3, 4)], [(2, 3), (3,)], [(3,), (3,)], [(2, 3), (3, 4), (4, 5)], [(3,), (3, 4), (4,)],
                   [(2, 3), (3, 4), (4,)], [(2, 3), (4, 5)], [(2, 3), (3,), (3, 4)], [(3,), (3, 4), (4, 2)]]:
        same(lambda s=shapes: multi_dot_shape(s), lambda s=shapes: torch.linalg.multi_dot([torch.randn(x) for x in s]))


_batch = hs.lists(hs.sampled_from([1, 2, 3]), max_size=2)


@fast(60)
@given(_batch, hs.sampled_from([2, 3]), hs.sampled_from([1, 2]), hs.sampled_from(["vector", "matrix", "short"]),
       _batch, hs.sampled_from([1, 2, 3]), seeds)
def test_lstsq_batches_and_right_hand_sides_as_torch(batch, m, n, kind, bbatch, k, seed):
    """Accept/refuse, the shape and the values of linalg.lstsq against torch over batches and right-hand-side
    kinds, torch's quirks included (a B one dim short that is not A.shape[:-1] is a matrix whose solution is
    broadcast to A.shape[:-2] with B.shape[:-1]); the rule gives the runtime's shape or code."""
    from shapetorch._rules.errors import RuleError
    from shapetorch._rules.matrix import lstsq_shape

    rng = np.random.default_rng(seed)
    a_shape = (*batch, m, n)
    b_shape = {"vector": (*bbatch, m), "matrix": (*bbatch, m, k), "short": (*bbatch[1:], m, k)}[kind]
    A, B = rng.standard_normal(a_shape), rng.standard_normal(b_shape)
    try:
        want = torch.linalg.lstsq(torch.tensor(A), torch.tensor(B)).solution.numpy()
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as got:
            st.linalg.lstsq(st.tensor(A), st.tensor(B))
        assert isinstance(got.value, st.ShapetorchError), f"torch: {e}; shapetorch: {got.value!r}"
        with pytest.raises(RuleError):
            lstsq_shape(a_shape, b_shape)
        return
    got = st.linalg.lstsq(st.tensor(A), st.tensor(B)).solution.numpy()
    assert got.shape == want.shape == lstsq_shape(a_shape, b_shape)
    np.testing.assert_allclose(got, want, atol=1e-8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstsq_gels_refuses_a_rank_deficient_matrix_as_torch(dtype):
    """driver='gels' is LAPACK's QR solver, which torch lets refuse a matrix that is not of full rank (a
    LinAlgError naming the batch element and the 1-based diagonal element), where the other drivers answer. A
    zero column, a repeated row (wide), a multiple column (tall), one bad matrix of a batch; a zero matrix is
    LAPACK's quick return (no error); a full-rank one is solved."""
    # refused: True by both, False by neither, "rounding": by torch in float32 (in float64 its MKL leaves the zero
    # at 1e-16 and answers in the 1e15s; ours refuses it in both)
    cases = [([[0., 1], [0, 1], [0, 1]], True), ([[1., 2, 3], [1, 2, 3]], "rounding"),
             ([[1., 2], [2, 4], [3, 6]], "rounding"), ([[0., 0], [0, 0]], False), ([[1., 2], [3, 4], [5, 7]], False)]
    for A, refused in cases:
        a = np.array(A, dtype=dtype)
        b = np.ones((a.shape[0], 2), dtype=dtype)
        try:
            want = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver="gels").solution.numpy()
        except torch.linalg.LinAlgError as e:
            want = e
        if refused:
            assert isinstance(want, Exception) or (refused == "rounding" and dtype == "float64")
            with pytest.raises(RuntimeError) as got:
                st.linalg.lstsq(st.tensor(a), st.tensor(b), driver="gels")
            assert got.value.code == "linalg_error_not_full_rank"
            if isinstance(want, Exception):
                assert str(got.value).split(": ", 1)[1] == str(want).split(": ", 1)[1]
        else:
            np.testing.assert_allclose(st.linalg.lstsq(st.tensor(a), st.tensor(b), driver="gels").solution.numpy(),
                                       want, atol=1e-5)
    batch = np.random.default_rng(0).standard_normal((3, 2, 3))
    batch[1] = [[1, 2, 3], [0, 0, 0]]  # (a zero row: an exact zero in any LAPACK's factor)
    with pytest.raises(torch.linalg.LinAlgError) as want_batch:
        torch.linalg.lstsq(torch.tensor(batch), torch.ones(3, 2, 1, dtype=torch.float64), driver="gels")
    with pytest.raises(RuntimeError) as got_batch:
        st.linalg.lstsq(st.tensor(batch), st.ones(3, 2, 1, dtype=st.float64), driver="gels")
    assert str(got_batch.value).split(": ", 1)[1] == str(want_batch.value).split(": ", 1)[1]
    for driver in ("gelsy", "gelsd", "gelss"):  # the rank-revealing drivers answer
        st.linalg.lstsq(st.tensor(batch), st.ones(3, 2, 1, dtype=st.float64), driver=driver)


def test_block_diag_rule_shape_matches_torch():
    """block_diag's rule (not covered by the checking mode): rows and columns add up from zero."""
    import itertools

    from shapetorch._rules.matrix import block_diag_shape

    for shapes in itertools.chain.from_iterable(itertools.product([(), (3,), (2, 4), (0, 2)], repeat=n)
                                                for n in range(0, 3)):
        want = torch.block_diag(*[torch.zeros(s) for s in shapes]).shape
        assert block_diag_shape(shapes) == tuple(want), shapes
