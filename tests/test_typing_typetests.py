"""The typetests under each checker, the runner itself, the generated stub, and plugin hygiene."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shapetorch.typetest import check_files, check_main, expectations

ROOT = Path(__file__).resolve().parent.parent
TT = ROOT / "typetests"


def _report(results: list) -> str:
    return "\n".join(p for r in results for p in r.problems)


def test_plugin_typetests() -> None:
    results = check_files([TT / "plugin_core.py", TT / "einsum_typetest.py", TT / "plugin_nn.py", TT / "plugin_signatures.py",
                           TT / "namespaces_typetest.py", *sorted(TT.glob("plugin_ops_*.py"))], plugin=True)
    assert all(r.ok for r in results), _report(results)
    assert sum(len(v) for v in expectations(TT / "plugin_core.py").values()) > 100


LOWEST_MYPY = ROOT / ".mypy-lowest"


@pytest.mark.skipif(not LOWEST_MYPY.is_dir(), reason=".ci/run installs the lowest supported mypy into .mypy-lowest")
def test_plugin_typetests_on_lowest_mypy() -> None:
    env = {**os.environ, "PYTHONPATH": str(LOWEST_MYPY)}
    version = subprocess.run([sys.executable, "-c", "import mypy.version; print(mypy.version.__version__)"],
                             capture_output=True, text=True, env=env, check=True).stdout.strip()
    assert version == "1.20.2"
    r = subprocess.run([sys.executable, "-m", "shapetorch.typetest", str(TT / "plugin_core.py"),
                        str(TT / "einsum_typetest.py")], capture_output=True, text=True, env=env, check=False)
    assert r.returncode == 0, r.stdout + r.stderr


def test_noplugin_typetests() -> None:
    results = check_files([TT / "noplugin_smoke.py", TT / "namespaces_typetest.py", TT / "noplugin_nn_layers.py"],
                          plugin=False)
    assert all(r.ok for r in results), _report(results)


def _pyright() -> str | None:
    exe = Path(sys.executable).parent / "pyright"
    return str(exe) if exe.exists() else shutil.which("pyright")


def test_pyright_typetests() -> None:
    exe = _pyright()
    if exe is None:
        pytest.skip("pyright is not installed")
    proc = subprocess.run(
        [exe, "--pythonpath", sys.executable, "--outputjson", "-p", str(TT / "pyrightconfig.json")],
        check=False, capture_output=True, text=True, cwd=TT, timeout=300,
    )
    report = json.loads(proc.stdout)
    errors = [d for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert not errors, "\n".join(f"{d['range']['start']['line'] + 1}: {d['message']}" for d in errors)
    assert report["summary"]["filesAnalyzed"] >= 1


def test_runner_reports_both_directions(tmp_path: Path) -> None:
    f = tmp_path / "t_bad.py"
    f.write_text(
        "from typing import Literal as L, reveal_type\n"
        "from shapetorch import Tensor, float32\n"
        "def f(a: Tensor[tuple[L[2], L[3]], float32]) -> None:\n"
        "    a @ a\n"  # an error nobody expected
        "    reveal_type(a)  # N: Tensor[tuple[Literal[9]]\n"  # a wrong expectation
        "    a.sum()  # E: never reported  [shape-matmul]\n"  # an expectation nothing meets
    )
    [result] = check_files([f])
    text = "\n".join(result.problems)
    assert "unexpected error: matmul: inner dimensions do not match" in text
    assert "expected note 'Tensor[tuple[Literal[9]]'" in text
    assert "expected error 'never reported' [shape-matmul]" in text
    assert len(result.problems) == 4  # the reveal's real note is unexpected too


def test_write_messages_name_the_statement(tmp_path: Path) -> None:
    """A failed in-place operator or item write is reported as the statement the user wrote (``x += y``,
    ``x[index] = value``), whole: never by the dunder or the primitive it runs (``__iadd__:``, ``index_put:``),
    and the typetests' substring expectations would not notice such a prefix, so the full text is compared."""
    from shapetorch.typetest import run_mypy

    f = tmp_path / "writes.py"
    f.write_text(
        "from typing import Literal as L\n"
        "from shapetorch import Tensor, float32\n"
        "def f(x: Tensor[tuple[L[3]], float32], y: Tensor[tuple[L[2], L[3]], float32]) -> None:\n"
        "    x += y\n"
        "    x *= y\n"
        "    x[0:2] = y\n"
        "    y[0] += y\n"
    )
    stdout, _, _ = run_mypy([f])
    messages = [line.split(": error: ", 1)[1] for line in stdout.splitlines() if ": error: " in line]
    assert messages == [
        "x += y: output with shape (3,) doesn't match the broadcast shape (2, 3)  [inplace_error_shape_change]",
        "x *= y: output with shape (3,) doesn't match the broadcast shape (2, 3)  [inplace_error_shape_change]",
        "x[index] = value: value of shape (2, 3) cannot be broadcast to indexing result of shape (2,)  "
        "[setitem_error_shape_mismatch]",
        "x += y: output with shape (3,) doesn't match the broadcast shape (2, 3)  [inplace_error_shape_change]",
    ]


def test_module_entry_point(tmp_path: Path) -> None:
    ok = tmp_path / "t_ok.py"
    ok.write_text("from shapetorch import zeros, reveal_shape\nreveal_shape(zeros(2, 3))  # N: Shape: (2, 3)\n")
    run = subprocess.run([sys.executable, "-m", "shapetorch.typetest", str(ok)], check=False, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    ok.write_text("from shapetorch import zeros, reveal_shape\nreveal_shape(zeros(2, 3))  # N: Shape: (3, 2)\n")
    run = subprocess.run([sys.executable, "-m", "shapetorch.typetest", str(ok)], check=False, capture_output=True, text=True)
    assert run.returncode == 1 and "FAIL" in run.stdout


def test_check_main(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "model.py"
    f.write_text("import shapetorch as st\nx = st.zeros(2, 3) @ st.zeros(4, 5)\n")
    assert check_main([str(f)]) == 1
    out = capsys.readouterr().out
    assert "[matmul_error_inner_dimensions_do_not_match]" in out and "(3 != 4)" in out
    f.write_text("import shapetorch as st\n\nx = st.zeros(2, 3) @ st.zeros(3, 50)\n")  # new size: mypy reads it anew
    assert check_main([str(f)]) == 0


def test_stub_is_generated_fresh() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "stubs" / "generate_stubs.py"), "--check"],
                          check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout
    assert (ROOT / "stubs" / "shapetorch-stubs" / "py.typed").read_text() == "partial\n"


def test_plugin_loads_without_numpy_or_wgpu() -> None:
    code = (
        "import sys, shapetorch_mypy\n"
        "from shapetorch_mypy.plugin import ShapetorchPlugin\n"
        "bad = [m for m in ('numpy', 'wgpu', 'shapetorch._api', 'shapetorch._tensor') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_error_codes_have_family_parents() -> None:
    from shapetorch._rules.errors import CATALOGUE
    from shapetorch_mypy.codes import CODES, register_all

    register_all()
    for code, entry in CATALOGUE.items():
        assert CODES[code].sub_code_of is not None
        assert CODES[code].sub_code_of.code == entry.family


def test_rules_version_changes_with_the_rules(tmp_path: Path) -> None:
    from mypy.options import Options
    from mypy.plugin import ReportConfigContext

    from shapetorch_mypy.plugin import ShapetorchPlugin

    opts = Options()
    plugin = ShapetorchPlugin(opts)
    data = plugin.report_config_data(ReportConfigContext("m", "m.py", False))
    assert len(data["shapetorch_rules"]) == 16
    assert "_PRECISE_STUBS" in opts.always_false


def test_every_public_name_has_a_stub() -> None:
    """Each runtime public name (``_api.__all__``, the op registry, nn, nn.functional) is declared in the stubs.

    Fails when an op is registered (or a layer added) without regenerating: run stubs/generate_stubs.py."""
    sys.path.insert(0, str(ROOT / "stubs"))
    try:
        from stubgen.tables import runtime_names, stub_names
        from stubgen.write import OUT
    finally:
        sys.path.pop(0)
    import shapetorch.nn as nn
    import shapetorch.nn.functional as F

    have_mod, have_tensor = stub_names(OUT.read_text())
    want_mod, want_tensor = runtime_names()
    assert not sorted(want_mod - have_mod), "shapetorch names without a stub"
    assert not sorted(want_tensor - have_tensor), "Tensor methods without a stub"
    nn_dir = OUT.parent / "nn"
    assert not sorted(set(nn.__all__) - stub_names((nn_dir / "__init__.pyi").read_text())[0])
    assert not sorted(set(F.__all__) - stub_names((nn_dir / "functional.pyi").read_text())[0])


@pytest.mark.parametrize("module", ["linalg", "special", "func", "amp", "testing", "distributions"])
def test_every_namespace_name_has_a_stub(module: str) -> None:
    """torch's other namespaces: each public name of ``shapetorch.<module>`` is declared in its stub, and the
    ``shapetorch`` stub imports the module (``st.linalg.solve`` after ``import shapetorch as st``)."""
    import importlib

    sys.path.insert(0, str(ROOT / "stubs"))
    try:
        from stubgen.tables import stub_names
        from stubgen.write import OUT
    finally:
        sys.path.pop(0)
    path = OUT.parent / f"{module}.pyi"
    if not path.exists():
        path = OUT.parent / module / "__init__.pyi"
    runtime = importlib.import_module(f"shapetorch.{module}")
    assert not sorted(set(runtime.__all__) - stub_names(path.read_text())[0])
    assert module in stub_names(OUT.read_text())[0]
