"""The checkers checked: gradcheck and gradgradcheck catch a wrong derivative in every (input, output)
position of a function with several of each, and the plugin's rules hash follows every rule file."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

import shapetorch as st
from shapetorch import autograd

# f(x, y) = (x * y, x + y**2); (input, output) -> the true partial derivative times the cotangent
TRUE = {
    (0, 0): lambda g, x, y: g * y, (1, 0): lambda g, x, y: g * x,
    (0, 1): lambda g, x, y: g, (1, 1): lambda g, x, y: g * 2 * y,
}


def two_by_two(wrong: tuple[int, int] | None, detach_second_order: tuple[int, int] | None = None) -> type:
    """A Function of two inputs and two outputs whose derivative is off (x3) at ``wrong``, or whose
    derivative at ``detach_second_order`` is right at first order but constant to the second."""

    class F(autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y * y

        @staticmethod
        def backward(ctx, g0, g1):
            x, y = ctx.saved_tensors
            grads = [0, 0]
            for (i, o), rule in TRUE.items():
                g = (g0, g1)[o]
                xi, yi = (x.detach(), y.detach()) if (i, o) == detach_second_order else (x, y)
                term = rule(g, xi, yi) * (3 if (i, o) == wrong else 1)
                grads[i] = grads[i] + term
            return tuple(grads)

    return F


def inputs():
    return (st.tensor([0.5, -1.5, 2.0], dtype=st.float64, requires_grad=True),
            st.tensor([1.25, 0.75, -0.5], dtype=st.float64, requires_grad=True))


def test_gradcheck_passes_the_right_derivatives():
    assert autograd.gradcheck(two_by_two(None).apply, inputs())
    assert autograd.gradgradcheck(two_by_two(None).apply, inputs())


@pytest.mark.parametrize("wrong", list(itertools.product(range(2), range(2))))
def test_gradcheck_names_each_wrong_input_output_pair(wrong):
    i, o = wrong
    fn = two_by_two(wrong).apply
    assert autograd.gradcheck(fn, inputs(), raise_exception=False) is False
    with pytest.raises(autograd.GradcheckError, match=f"output {o} with respect to input {i}"):
        autograd.gradcheck(fn, inputs())


@pytest.mark.parametrize("pair", [(0, 0), (1, 1), (1, 0)])
def test_gradgradcheck_catches_a_wrong_second_derivative(pair):
    fn = two_by_two(None, detach_second_order=pair).apply
    assert autograd.gradcheck(fn, inputs())  # first order is right ...
    assert autograd.gradgradcheck(fn, inputs(), raise_exception=False) is False  # ... second order is not
    with pytest.raises(autograd.GradcheckError, match="Jacobian mismatch"):
        autograd.gradgradcheck(fn, inputs())


def test_gradcheck_checks_forward_mode_of_every_output():
    # the second output's forward-mode derivative is wrong (x3); backward mode is right
    def f(x, y):
        return x * y, x + y * y

    assert autograd.gradcheck(f, inputs(), check_forward_ad=True)

    class WrongJvp(autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, g0, g1):
            (x,) = ctx.saved_tensors
            return g0 * 2 + g1 * 2 * x

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t * 0

    x = inputs()[0]
    assert autograd.gradcheck(WrongJvp.apply, (x,))
    with pytest.raises(autograd.GradcheckError, match="output 1 with respect to input 0"):
        autograd.gradcheck(WrongJvp.apply, (x,), check_forward_ad=True, check_backward_ad=False)


# -- the plugin's rules hash ---------------------------------------------------------------------------


def test_rules_hash_follows_every_rule_file(tmp_path, monkeypatch):
    """mypy keeps a cache keyed on the hash: a rule edited but hashed the same would serve stale verdicts."""
    pytest.importorskip("mypy")
    import shapetorch._rules as rules
    from shapetorch_mypy.plugin import rules_version

    copy = tmp_path / "_rules"
    shutil.copytree(Path(rules.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(rules, "__file__", str(copy / "__init__.py"))
    base = rules_version()
    assert rules_version() == base  # stable for the same files
    seen = {base}
    for f in sorted(copy.glob("*.py")):
        old = f.read_bytes()
        f.write_bytes(old + b"\n# edited\n")
        h = rules_version()
        assert h not in seen, f"editing {f.name} left the rules hash unchanged"
        seen.add(h)
        f.write_bytes(old)
    assert rules_version() == base
    (copy / "new_family.py").write_text("X = 1\n")
    assert rules_version() != base  # a new rule module counts too


# -- the checking mode: every listed op's result against its rules ---------------------------------------


def test_the_suite_runs_in_checking_mode():
    from shapetorch.ops import _rule_results

    assert _rule_results.ENABLED
    assert st.matmul.__wrapped__ is not None  # the registered function is the checking wrapper


@pytest.mark.parametrize("mutant", ["drop a batch dim", "swap the result dims"])
def test_a_wrong_rule_result_fails_the_op(monkeypatch, mutant):
    """The runtime used the matmul rule only for its verdict; a rule computing a wrong result shape
    (what the plugin would report) passed every runtime test. In checking mode it fails at once."""
    import shapetorch._rules.matmul as RM
    from shapetorch.ops._rule_results import RuleResultMismatch

    right = RM.matmul_shape
    wrong = {"drop a batch dim": lambda s: s[1:], "swap the result dims": lambda s: s[:-2] + s[-2:][::-1]}[mutant]
    monkeypatch.setattr(RM, "matmul_shape", lambda a, b, op="matmul": wrong(right(a, b, op)))
    with pytest.raises(RuleResultMismatch, match="the rules say"):
        st.matmul(st.ones(2, 3, 4), st.ones(4, 5))


def test_checking_mode_off_costs_nothing():
    """Without the variable the registered functions are the argument guards of the plain ones (no checking
    wrapper on the call path): one level of ``__wrapped__``, not two."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SHAPETORCH_CHECK_RULES"}
    code = ("import shapetorch as st; "
            "print(*(hasattr(getattr(f, '__wrapped__', f), '__wrapped__') for f in (st.matmul, st.add)))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
