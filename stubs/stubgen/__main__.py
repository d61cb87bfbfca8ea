"""The command: ``python stubs/generate_stubs.py [--check]`` (or ``python -m stubgen`` with ``stubs/`` on the path)."""

from __future__ import annotations

import sys

from .write import outputs, stale, write


def main(argv: list[str]) -> int:
    files = outputs()
    if "--check" in argv:
        old = stale(files)
        if old:
            print(f"{', '.join(old)} stale: run python stubs/generate_stubs.py")
            return 1
        return 0
    write(files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
