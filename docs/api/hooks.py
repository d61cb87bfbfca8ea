"""mkdocs hook (``hooks:`` in mkdocs.yml): writes the parts of the API reference that follow the code, and
publishes the committed benchmark plots.

``<!-- api:ops -->`` becomes one mkdocstrings block per module that defines public functions (read from the
op registry at build time, so a new op or op family is documented without editing the page), and ``<!-- api:module NAME -->`` becomes
``::: NAME`` when that module exists, or a note when it does not.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any

INSPECT = "    options:\n      force_inspection: true\n      show_root_full_path: true\n      heading_level: 3\n"


def _ops_blocks() -> str:
    """One block per module that defines registered functions, listing exactly those functions."""
    import shapetorch  # noqa: F401  (loads every op family)
    from shapetorch.ops._registry import FUNCTIONS

    by_module: dict[str, dict[str, list[str]]] = {}
    for public, fn in FUNCTIONS.items():
        module = importlib.import_module(fn.__module__)
        if getattr(module, fn.__name__, None) is not fn:
            continue  # made in a factory and not kept by its module: no stable path to document
        by_module.setdefault(fn.__module__, {}).setdefault(fn.__name__, []).append(public)
    out = []
    for name in sorted(by_module):
        names = by_module[name]
        members = ", ".join(sorted(names))
        aliases = sorted(f"`{a}` ({fn})" for fn, pub in names.items() for a in pub if a != fn)
        out.append(f"::: {name}\n{INSPECT}      members: [{members}]\n")
        if aliases:
            out.append("Also reachable as: " + ", ".join(aliases) + ".\n")
    return "\n".join(out)


def _module_block(match: re.Match[str]) -> str:
    name = match.group(1)
    if importlib.util.find_spec(name) is None:
        return f"`{name}` is not part of this build."
    return f"::: {name}\n"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    if "<!-- api:ops -->" in markdown:
        markdown = markdown.replace("<!-- api:ops -->", _ops_blocks())
    return re.sub(r"<!-- api:module ([\w.]+) -->", _module_block, markdown)


def on_files(files: Any, config: Any) -> Any:
    """Publishes bench/results/*.png (the committed benchmark plots) as ``bench-results/NAME.png``."""
    from pathlib import Path

    from mkdocs.structure.files import File

    results = Path(config["config_file_path"]).parent / "bench" / "results"
    for png in sorted(results.glob("*.png")):
        files.append(File.generated(config, f"bench-results/{png.name}", abs_src_path=str(png)))
    return files
