"""The architecture is kept by contracts, not by memory: the import-linter contracts of ``pyproject.toml``
(layers, no cycles between top-level parts, the rules' and the plugin's isolation) and module names that
say what a module holds. docs/architecture.md explains both."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
CONTRACTS = {c["name"]: c for c in PYPROJECT["tool"]["importlinter"]["contracts"]}


def _top_level_parts() -> set[str]:
    pkg = ROOT / "src" / "shapetorch"
    parts = {p.stem for p in pkg.glob("*.py") if p.stem != "__init__"}
    parts |= {p.name for p in pkg.iterdir() if (p / "__init__.py").exists()}
    return {f"shapetorch.{p}" for p in parts}


def test_lint_imports_keeps_every_contract():
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is part of the test extra"
    done = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    kept = re.search(r"Contracts: (\d+) kept, (\d+) broken", done.stdout)
    assert kept and int(kept.group(1)) == len(CONTRACTS) and kept.group(2) == "0", done.stdout[-3000:]


def test_every_top_level_part_has_a_layer():
    """A new part must be placed in the layers (and so in the architecture), not left outside them."""
    layers = CONTRACTS["The runtime's parts import downward only"]["layers"]
    placed = {m.strip() for layer in layers for m in layer.split("|")}
    assert _top_level_parts() == placed


def test_plugin_contract_forbids_every_part_but_the_rules():
    forbidden = set(CONTRACTS["The mypy plugin imports only shapetorch._rules of the runtime"]["forbidden_modules"])
    assert _top_level_parts() - {"shapetorch._rules"} <= forbidden
    assert "shapetorch._rules" not in forbidden


def test_language_server_contract_forbids_every_part_but_the_rules():
    """The language server is a tool over the plugin: it never loads the tensor runtime."""
    name = "The language server imports only shapetorch._rules of the runtime (and the plugin, mypy, pygls)"
    forbidden = set(CONTRACTS[name]["forbidden_modules"])
    assert _top_level_parts() - {"shapetorch._rules", "shapetorch.lsp"} <= forbidden


@pytest.mark.parametrize("tree", ["src", "mypy_plugin", "stubs", "tests", "typetests", "tools", "bench"])
def test_modules_are_named_for_what_they_hold(tree):
    """Not for when they were written: no ``*_more``, ``extra_*``, ``more``, ``misc`` modules."""
    bad = [str(p.relative_to(ROOT)) for p in (ROOT / tree).rglob("*.py")
           if re.fullmatch(r"(.*_more|extra_.*|more|misc|_?new_.*|.*_new|.*_extra)", p.stem)]
    assert not bad


def test_architecture_page_names_real_modules():
    """docs/architecture.md is the contributor's map: every module it names exists where it says."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    roots = [ROOT, ROOT / "src" / "shapetorch", ROOT / "mypy_plugin", ROOT / "src"]
    paths = {p for p in re.findall(r"`([\w./-]+/[\w.-]+\.(?:py|md|toml))`", page) if "<" not in p}
    missing = [p for p in sorted(paths) if not any((r / p).exists() for r in roots)]
    # the op-family table: rules, ops, hooks and tests columns, each a folder
    folders = [ROOT / "src/shapetorch/_rules", ROOT / "src/shapetorch/ops",
               ROOT / "mypy_plugin/shapetorch_mypy/hooks", ROOT / "tests"]
    table = page.split("## Op families", 1)[1].split("\n## ", 1)[0]
    for row in table.splitlines()[4:]:
        cells = row.strip("|").split("|")[1:]
        for folder, cell in zip(folders, cells):
            missing += [f"{folder.name}/{n}" for n in re.findall(r"`([\w.]+\.py)`", cell) if not (folder / n).exists()]
    assert paths and not missing
