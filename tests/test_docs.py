"""Every ```python block in the docs (and the README) runs. A block fenced as ```python raises must
raise a ShapetorchError: that is how the docs show an error and its message."""

import re
import sys
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


RESULT = re.compile(r"^\s*print\(.*\)\s*#\s?(?P<shown>.+)$")


def shown_results(code: str) -> dict[int, str]:
    """The results a block shows in comments, by line: `print(x.shape)   # shapetorch.Size([2, 3])`.
    Text after a ': ' or in parentheses two spaces after the value explains it
    (`# shapetorch.Size([4, 3]): tile`, `# shapetorch.Size([4, 2])  (NumPy: (2, 4))`). A comment
    that starts with a word (`# the last is (2, 16, 5)`) is prose and is not compared."""
    return {n: m["shown"].strip() for n, line in enumerate(code.splitlines(), 1)
            if (m := RESULT.match(line)) and VALUE.match(m["shown"].strip())}


VALUE = re.compile(r"shapetorch\.|tensor\(|[(\[<'\"\d-]|True\b|False\b|None\b")


def agrees(printed: str, shown: str) -> bool:
    # `...` in a comment stands for what differs from run to run (an object's address); a comment is one
    # line, so the printed text's line breaks and indentation count as one space.
    printed, shown = " ".join(printed.split()), " ".join(shown.split("  (", 1)[0].split())
    pattern = ".*".join(re.escape(part) for part in shown.split("..."))
    return re.fullmatch(pattern, printed, re.S) is not None or (
        ": " in shown and agrees(printed, shown.rsplit(": ", 1)[0]))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_runs(page, capsys):
    """Every block runs, and every `print(...)  # result` prints that result (a stale comment fails)."""
    namespace: dict[str, object] = {"__name__": "__docs__"}
    printed: dict[tuple[str, int], list[str]] = {}

    def record(*args: object, sep: str = " ", **_: object) -> None:
        frame = sys._getframe(1)
        printed.setdefault((frame.f_code.co_filename, frame.f_lineno), []).append(sep.join(map(str, args)))

    namespace["print"] = record
    for i, (raises, code) in enumerate(blocks(page)):
        name = f"{page.name}[{i}]"
        if raises:
            with pytest.raises(st.ShapetorchError):
                exec(compile(code, name, "exec"), namespace)
        else:
            exec(compile(code, name, "exec"), namespace)
        for line, shown in shown_results(code).items():
            for out in printed.get((name, line), []):
                assert agrees(out, shown), f"{name} line {line}: prints {out!r}, the page shows {shown!r}"
    st.set_printoptions(profile="default")


def test_a_stale_result_comment_fails():
    code = "print(1 + 1)   # 3\nprint('x')  # 'x': a letter\nprint(2)  # two, in prose\n"
    assert shown_results(code) == {1: "3", 2: "'x': a letter"}
    assert not agrees("2", "3") and agrees("'x'", "'x': a letter") and agrees("<A at 0x1>", "<A at ...>")
    assert agrees("tensor([[1],\n        [2]])", "tensor([[1], [2]])")
