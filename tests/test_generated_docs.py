"""Generated pages must be fresh: regenerate with the tool named in each page's header."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load(tool: str):
    spec = importlib.util.spec_from_file_location(tool, ROOT / "tools" / f"{tool}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_errors_page_is_fresh():
    gen = load("gen_errors_doc")
    assert gen.PAGE.read_text() == gen.render(), "docs/errors.md is stale: run python tools/gen_errors_doc.py"


def test_every_example_raises_its_own_code():
    gen = load("gen_errors_doc")
    for code, (example, _) in gen.EXAMPLES.items():
        assert gen._message(code, example)


def test_dtype_coverage_page_is_fresh():
    gen = load("gen_coverage_doc")
    assert gen.PAGE.read_text() == gen.render(), "docs/dtype-coverage.md is stale: run python tools/gen_coverage_doc.py"
