"""A floating tensor with a Python number (``_elementwise._binary``'s scalar path, which skips the promotion
table): result dtype, values and refusals as torch's, for every binary dunder and both operand orders."""

from __future__ import annotations

import operator

import numpy as np
import pytest
import torch

import shapetorch as st

OPS = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
    "floordiv": operator.floordiv, "mod": operator.mod, "pow": operator.pow, "and": operator.and_,
    "or": operator.or_, "xor": operator.xor, "lshift": operator.lshift, "rshift": operator.rshift,
    "lt": operator.lt, "ge": operator.ge, "eq": operator.eq, "ne": operator.ne,
}
X = [[0.5, -1.25], [3.0, 0.0]]
# differences older than the scalar path (the general path gives the same): torch's float16 floor division
# computes through fmod in float32, so 0.5 // 0.1 is 4 there and 5 here. The list may only shrink.
KNOWN = {("floordiv", "float16", 0.1, False)}


def _run(lib, dtype, op, scalar, reverse):
    t = lib.tensor(X, dtype=getattr(lib, dtype))
    try:
        out = op(scalar, t) if reverse else op(t, scalar)
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return e
    return out


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_floating_tensor_with_a_python_number_as_torch(name, dtype):
    op = OPS[name]
    for scalar in (2, -3, 0.1, 2.5, 0):
        for reverse in (False, True):
            ours, theirs = _run(st, dtype, op, scalar, reverse), _run(torch, dtype, op, scalar, reverse)
            where = f"{name} {dtype} scalar={scalar!r} reverse={reverse}"
            if isinstance(theirs, Exception):
                assert isinstance(ours, type(theirs)) and isinstance(ours, st.ShapetorchError), (where, ours, theirs)
                continue
            assert not isinstance(ours, Exception), (where, ours)
            assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1], where
            if (name, dtype, scalar, reverse) in KNOWN:
                assert not np.array_equal(ours.numpy(), theirs.numpy()), f"{where} now agrees: drop it from KNOWN"
                continue
            np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.numpy().astype(np.float64),
                                       rtol=1e-3 if dtype == "float16" else 1e-6, equal_nan=True, err_msg=where)


@pytest.mark.parametrize("name", ["atan2", "fmax", "fmin", "gcd", "hypot", "lcm", "logaddexp", "logaddexp2", "maximum",
                                  "minimum", "nextafter", "copysign", "eq", "fmod", "ge", "gt", "le", "lt", "ne",
                                  "add", "mul", "sub", "remainder", "pow", "xlogy", "float_power"])
def test_python_number_operands_accepted_or_refused_as_torch(name: str) -> None:
    """A Python number where torch's schema wants a Tensor is a TypeError with a code (``maximum(x, 2.0)``
    used to run); where the schema takes a Scalar, both run."""
    for make in (lambda lib: lib.ones(2), lambda lib: lib.ones(2, dtype=lib.int64)):
        for order in (0, 1):
            verdicts = []
            for lib in (torch, st):
                fn = getattr(lib, name)
                x = make(lib)
                try:
                    fn(*((x, 3) if order == 0 else (3, x)))
                    verdicts.append("ok")
                except TypeError as e:
                    verdicts.append("TypeError")
                    if lib is st:
                        assert getattr(e, "code", None) == "argument_error_type", e
                except (RuntimeError, NotImplementedError):
                    verdicts.append("other error")
            assert verdicts[0] == verdicts[1], (name, order, verdicts)
