"""Generate ``shapetorch-stubs/`` (``__init__.pyi`` and the ``nn`` stubs) from the op tables.

    python stubs/generate_stubs.py          # rewrite the stubs
    python stubs/generate_stubs.py --check  # exit 1 if a stub is stale (tests run this)

The generator is the ``stubgen`` package next to this file (its docstring lists its modules);
``nn_stubs.py`` renders the ``shapetorch.nn`` stubs.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # stubgen and nn_stubs

from stubgen.__main__ import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
