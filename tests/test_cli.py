"""The command-line tool: the README's demo and `info` (and `check`, exercised in the typing tests)."""

import re
import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "shapetorch", *args], capture_output=True, text=True, check=False)


def test_demo_trains_then_catches_one_bug_twice():
    r = run("demo")
    assert r.returncode == 0, r.stderr
    accuracy = float(re.search(r"final accuracy ([\d.]+)%", r.stdout).group(1))
    assert accuracy > 80
    # the same code statically (mypy plugin) and at runtime
    assert r.stdout.count("matmul_error_inner_dimensions_do_not_match") == 2
    assert "model.py:8: error:" in r.stdout
    assert "ShapeError [matmul_error_inner_dimensions_do_not_match]" in r.stdout
    assert "mypy not installed" not in r.stdout  # the real mypy run, not the rule's fallback text


def test_mypy_is_installed_with_the_package():
    """``pip install shapetorch`` brings mypy, so the demo and ``shapetorch check`` run the plugin on a fresh
    install: mypy is a dependency, not an extra (checked on the metadata the build reads)."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    assert any(re.match(r"mypy\b", dep) for dep in project["dependencies"]), project["dependencies"]


def test_info():
    r = run("info")
    assert r.returncode == 0, r.stderr
    assert "devices: cpu" in r.stdout and "dtype coverage (cpu)" in r.stdout
