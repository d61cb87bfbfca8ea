"""DESIGN §1: what each import may pull in, checked in a fresh interpreter (as jaxtyping does)."""

import json
import os
import subprocess
import sys
from typing import Any

import pytest


def loaded_after(code: str) -> set[str]:
    probe = f"import sys\n{code}\nimport json; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return set(json.loads(out.splitlines()[-1]))


def test_probe_sees_imports():
    # The probe itself must be able to fail: importing numpy shows up.
    assert "numpy" in loaded_after("import numpy")


@pytest.mark.parametrize("module", ["shapetorch", "shapetorch._rules"])
def test_cheap_imports_do_not_load_numpy_or_wgpu(module):
    mods = loaded_after(f"import {module}")
    assert "numpy" not in mods
    assert "wgpu" not in mods
    assert "mypy" not in mods


def test_rules_are_standard_library_only():
    mods = loaded_after("import shapetorch._rules")
    ours = {m for m in mods if m.startswith("shapetorch")}
    assert ours <= {"shapetorch", "shapetorch._rules"} | {m for m in ours if m.startswith("shapetorch._rules.")}


def test_runtime_does_not_load_wgpu():
    mods = loaded_after("import shapetorch as st; st.ones(2) + 1")
    assert "numpy" in mods
    assert "wgpu" not in mods


def test_plugin_does_not_load_numpy():
    mods = loaded_after("import shapetorch_mypy")
    assert "numpy" not in mods
    assert "wgpu" not in mods


def run_as_user(probe: str) -> Any:
    """The JSON ``probe`` prints last, run as a user's program runs: without the suite's rule-checking wrappers."""
    env = dict(os.environ, SHAPETORCH_CHECK_RULES="0")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.splitlines()[-1])


def test_first_op_defers_what_it_does_not_use():
    # numpy.random (about 20 ms) is imported by the first draw, pathlib by get_file_path: not by a first op that
    # needs neither (only what shapetorch itself brings in is looked at: the interpreter may load pathlib first)
    brought = set(run_as_user("import sys, json; before = set(sys.modules); import shapetorch as st; st.ones(1)\n"
                              "print(json.dumps(sorted(set(sys.modules) - before)))"))
    assert "numpy" in brought  # the probe sees what the first op imports
    assert "numpy.random" not in brought
    assert "pathlib" not in brought
    assert "numpy.random" in loaded_after("import shapetorch as st; st.randn(1)")


def test_argument_guards_are_generated_on_first_call():
    # Registering an op leaves a placeholder: no signature read or code compiled at import. Its first call
    # installs the guard's code into the same function object, which the table, Tensor and the op's module hold.
    lazy, total, before, after, refused = run_as_user("""
import json, shapetorch as st
from shapetorch.ops import _registry as r, reduction
lazy = [n for n, f in r.FUNCTIONS.items() if getattr(f, "__code__", None) is r._PLACEHOLDER]
f = r.FUNCTIONS["logsumexp"]
same = lambda: st.Tensor.logsumexp is f is reduction.logsumexp is st.logsumexp
before = same() and f.__code__ is r._PLACEHOLDER
st.logsumexp(st.ones(2), 0)
after = same() and f.__code__ is not r._PLACEHOLDER and f.__code__.co_varnames[:2] == ("input", "dim")
try:
    st.ones(2).logsumexp(0, bogus=1)
    refused = None
except TypeError as e:
    refused = e.code
print(json.dumps([len(lazy), len(r.FUNCTIONS), before, after, refused]))
""")
    assert lazy > 0.9 * total
    assert before and after
    assert refused == "argument_error_signature"
