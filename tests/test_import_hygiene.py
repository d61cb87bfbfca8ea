"""DESIGN §1: what each import may pull in, checked in a fresh interpreter (as jaxtyping does)."""

import json
import subprocess
import sys

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
