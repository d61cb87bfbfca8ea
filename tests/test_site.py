"""docs/ is a site: mkdocs.yml's nav holds every page, the API reference covers the public modules, the
site builds with warnings as errors (when mkdocs is installed, as .ci/run installs it), and the typed
examples on the pages this suite owns type-check with the plugin."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CONFIG = ROOT / "mkdocs.yml"
FENCE = re.compile(r"^```python( raises)?\n(.*?)^```", re.S | re.M)


def nav_pages() -> list[str]:
    """The pages named in mkdocs.yml's nav (read as text: the config has tags PyYAML's safe loader refuses)."""
    return re.findall(r"^\s*-\s*(?:[^:\n]+:\s*)?([\w./-]+\.md)\s*$", CONFIG.read_text(), re.M)


def test_every_page_is_in_the_nav() -> None:
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    nav = nav_pages()
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert pages - set(nav) == set(), "pages missing from mkdocs.yml's nav"
    assert set(nav) - pages == set(), "nav entries without a page"


def test_the_nav_has_the_sections() -> None:
    text = CONFIG.read_text()
    for title in ("Introduction", "Type Safety", "Tensor Expressions", "Tensor Indexing", "Einsum", "Einops",
                  "Autograd", "Training a Model", "Profiling & Memory", "PyTorch Migration", "Best Practices",
                  "Runtimes", "Performance", "PyTorch Compatibility", "Benchmarks", "DType Coverage", "Errors",
                  "API reference"):
        assert re.search(rf"^\s*- {re.escape(title)}:", text, re.M), title


def test_the_api_reference_covers_the_public_modules() -> None:
    api = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    for module in ("shapetorch.nn", "shapetorch.nn.functional", "shapetorch.optim", "shapetorch.autograd",
                   "shapetorch.utils.data", "shapetorch.registry", "shapetorch._api"):
        assert re.search(rf"^::: {re.escape(module)}$", api, re.M), module
    assert "<!-- api:ops -->" in api and "<!-- api:module shapetorch.fft -->" in api


def test_the_benchmarks_page_shows_the_committed_run() -> None:
    """The plot on docs/benchmarks.md is a committed bench/results/*.png (published by docs/api/hooks.py)."""
    page = (DOCS / "benchmarks.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(bench-results/([^)]+\.png)\)", page)
    assert images, "benchmarks.md shows the plot of a committed run"
    for name in images:
        assert (ROOT / "bench" / "results" / name).exists(), name
        assert (ROOT / "bench" / "results" / name).with_suffix(".json").exists(), name


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                    reason="mkdocs is not installed (pip install '.[docs]'; .ci/run installs it)")
def test_the_site_builds_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(CONFIG),
                          "--site-dir", str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         env=env, check=False)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-4000:]
    site = tmp_path / "site"
    for page in nav_pages():
        built = site / (page[:-3] + "/index.html" if not page.endswith("index.md") else page[:-3] + ".html")
        assert built.exists(), built
    ops = (site / "api" / "shapetorch" / "index.html").read_text()
    for name in ("shapetorch.ops.matmul.matmul", "shapetorch.ops.einsum.einsum", "shapetorch._api.Tensor"):
        assert f'id="{name}"' in ops, name


OWN_PAGES = ("index.md", "tensor-expressions.md", "tensor-indexing.md", "migration.md", "best-practices.md",
             "performance.md", "benchmarks.md")


def test_typed_examples_on_these_pages_check(tmp_path: Path) -> None:
    """The blocks with ``Tensor[...]`` annotations, page by page, pass mypy with the plugin (as docs/type-safety.md's do)."""
    from shapetorch.typetest import check_files

    files = []
    for name in OWN_PAGES:
        typed = [m.group(2) for m in FENCE.finditer((DOCS / name).read_text()) if "Tensor[" in m.group(2)]
        if typed:
            f = tmp_path / (name[:-3].replace("-", "_") + ".py")
            f.write_text("\n".join(typed))
            files.append(f)
    assert files, "best-practices.md shows typed models"
    results = check_files(files)
    assert all(r.ok for r in results), "\n".join(p for r in results for p in r.problems)
