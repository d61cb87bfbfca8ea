"""Every ```python block in the docs (and the README) runs. A block fenced as ```python raises must
raise a ShapetorchError: that is how the docs show an error and its message."""

import re
from pathlib import Path

import pytest

import shapetorch as st

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```python( raises)?\n(.*?)^```", re.S | re.M)
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])


def blocks(page: Path) -> list[tuple[bool, str]]:
    return [(bool(m.group(1)), m.group(2)) for m in FENCE.finditer(page.read_text())]


def test_the_fence_pattern_finds_blocks():
    assert blocks(ROOT / "README.md"), "the README shows code; the pattern must find it"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs(page, capsys):
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for i, (raises, code) in enumerate(blocks(page)):
        if raises:
            with pytest.raises(st.ShapetorchError):
                exec(compile(code, f"{page.name}[{i}]", "exec"), namespace)
        else:
            exec(compile(code, f"{page.name}[{i}]", "exec"), namespace)
    st.set_printoptions(profile="default")
