"""The project's own code stays type-checked (mypy --strict) and linted (ruff), as part of the test run."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True)


@pytest.mark.skipif(shutil.which("ruff") is None and not (Path(sys.executable).parent / "ruff").exists(),
                    reason="ruff is installed by the test extra")
def test_ruff_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    r = run(ruff, "check", "src", "mypy_plugin", "tests", "bench", "tools")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_strict_clean():
    r = run(sys.executable, "-m", "mypy", "--config-file", "pyproject.toml")
    assert r.returncode == 0, r.stdout + r.stderr
