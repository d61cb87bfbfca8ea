"""What the page generators share: write a generated page, or with --check only say whether it is fresh."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(page: Path, text: str) -> None:
    if "--check" in sys.argv:
        sys.exit(0 if page.read_text() == text else 1)
    page.write_text(text)
    print(f"wrote {page.name}")
