"""Every (op, dtype) that coverage_report() claims is checked against torch: the same probe must be
accepted or refused by torch alike, and where both run, the values (and gradients) must agree."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import shapetorch as st
from shapetorch.registry import _sample, _try_forward

ROWS = st.coverage_report(devices=["cpu"])
# Deliberate differences, each with its reason (docs/compatibility.md lists them too).
KNOWN = {
    ("view_as_complex", "float16"): "shapetorch has no complex32 dtype",
    ("view_as_complex_copy", "float16"): "shapetorch has no complex32 dtype",
    # torch's half-precision matrix_exp overflows to inf on this sample although the result fits in float16
    ("matrix_exp", "float16"): "torch overflows; shapetorch computes in float64 (docs/compatibility.md)",
    ("matrix_exp", "bfloat16"): "torch overflows; shapetorch computes in float64 (docs/compatibility.md)",
    # torch raises at backward when igamma's first argument requires grad; shapetorch gives that argument no
    # gradient (a known difference, docs/compatibility.md)
    **{(op, dt): "the gradient for igamma's first argument" for op in ("igamma", "igammac")
       for dt in ("float32", "float64")},
    # the probe's factor is not triangular: torch's value reads its triangle but its gradient multiplies by the
    # whole matrix; for a triangular factor (what the functions take) both agree (tests/test_torch_names.py)
    **{(op, dt): "a non-triangular factor" for op in ("cholesky_inverse", "cholesky_solve")
       for dt in ("float32", "float64")},
}


def torch_op(name):
    return getattr(torch, name, None) or getattr(F, name, None)


def to_torch(t):
    a = t.detach().numpy()
    if t.dtype is st.bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(a.copy())


def probe_torch(fn, x):
    for args in ((x,), (x, x)):
        try:
            out = fn(*args)
        except Exception:  # the probe mirrors shapetorch's: any refusal means "not supported"
            continue
        return out if isinstance(out, torch.Tensor) else None
    return None


def as_array(t):
    a = t.detach().resolve_conj().resolve_neg()
    if a.dtype == torch.complex32:  # shapetorch has no complex32 and gives complex64 (compatibility.md)
        a = a.to(torch.complex64)
    a = a.float() if a.dtype in (torch.bfloat16, torch.float16) else a
    return a.numpy(force=True)


def test_the_report_is_broad():
    assert len({r.op for r in ROWS}) > 100
    assert sum(r.forward for r in ROWS) > 900


@pytest.mark.parametrize("op", sorted({r.op for r in ROWS if torch_op(r.op) is not None}))
def test_claims_match_torch(op):
    fn = torch_op(op)
    for row in (r for r in ROWS if r.op == op):
        x = _sample(getattr(st, row.dtype), "cpu")
        theirs = probe_torch(fn, to_torch(x))
        if (op, row.dtype) in KNOWN:
            continue
        assert row.forward == (theirs is not None), f"{op}[{row.dtype}]: ours {row.forward}, torch {theirs is not None}"
        if not row.forward:
            continue
        ours = _try_forward(getattr(st, op), x)
        tol = 2e-2 if row.dtype in ("float16", "bfloat16") else 1e-5
        np.testing.assert_allclose(ours.detach().numpy().astype(as_array(theirs).dtype), as_array(theirs), rtol=tol,
                                   atol=tol, err_msg=f"{op}[{row.dtype}]")
        if row.backward:
            xg = x.detach().requires_grad_(True)
            _try_forward(getattr(st, op), xg).sum().backward()
            tx = to_torch(x).requires_grad_(True)
            probe_torch(fn, tx).sum().backward()
            np.testing.assert_allclose(xg.grad.numpy(), as_array(tx.grad), rtol=1e-5, atol=1e-6, err_msg=f"{op} grad")
