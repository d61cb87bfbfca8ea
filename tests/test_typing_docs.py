"""docs/type-safety.md is a typetest: its ```python blocks type-check with the plugin as annotated.

(tests/test_docs.py runs the same blocks with the runtime.)"""

from __future__ import annotations

import re
from pathlib import Path

from shapetorch.typetest import check_files

PAGE = Path(__file__).resolve().parents[1] / "docs" / "type-safety.md"
FENCE = re.compile(r"^```python( raises)?\n(.*?)^```", re.S | re.M)


def test_typed_examples_check(tmp_path: Path) -> None:
    blocks = [m.group(2) for m in FENCE.finditer(PAGE.read_text())]
    assert len(blocks) >= 5
    files = []
    for i, code in enumerate(blocks):
        f = tmp_path / f"type_safety_{i}.py"
        f.write_text(code)
        files.append(f)
    results = check_files(files)
    assert all(r.ok for r in results), "\n".join(p for r in results for p in r.problems)
