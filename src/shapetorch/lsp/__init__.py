"""The language server: ``shapetorch lsp`` shows the plugin's shapes and errors in any LSP editor.

``checker`` runs mypy's daemon with the plugin and reads the types it computed; ``server`` speaks the
protocol (pygls); ``actions`` turns a "did you mean" into a quick fix. A tool above the runtime: it
imports the plugin, mypy and ``shapetorch._rules``, never the tensor runtime (docs/editor.md).
"""

from __future__ import annotations

import sys


def main() -> int:
    """``shapetorch lsp``: serve on stdio; without pygls, say what to install."""
    try:
        from .server import main as serve
    except ImportError as e:
        print(f"shapetorch lsp needs pygls ({e}): pip install 'shapetorch[lsp]'", file=sys.stderr)
        return 1
    return serve()
