"""Every generated stub file and its text; writing them, or finding the stale ones."""

from __future__ import annotations

from pathlib import Path

from .render_module import render
from .render_namespaces import outputs as namespace_outputs

STUBS = Path(__file__).parent.parent / "shapetorch-stubs"
OUT = STUBS / "__init__.pyi"


def outputs() -> dict[Path, str]:
    """Every generated stub file and its text."""
    import nn_stubs  # stubs/nn_stubs.py: the shapetorch.nn part

    nn_dir = OUT.parent / "nn"
    return {
        OUT: render(),
        nn_dir / "__init__.pyi": nn_stubs.render_nn(),
        nn_dir / "functional.pyi": nn_stubs.render_functional(),
        nn_dir / "init.pyi": nn_stubs.render_loose("shapetorch.nn.init"),
        nn_dir / "utils" / "__init__.pyi": nn_stubs.render_loose("shapetorch.nn.utils"),
        nn_dir / "utils" / "rnn.pyi": nn_stubs.render_utils_rnn(),
        nn_dir / "utils" / "prune.pyi": nn_stubs.render_loose("shapetorch.nn.utils.prune"),
        **namespace_outputs(OUT.parent),
    }


def stale(files: dict[Path, str]) -> list[str]:
    """The files whose text on disk differs from ``files`` (or that are missing)."""
    return [str(p) for p, text in files.items() if not p.exists() or p.read_text() != text]


def write(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (OUT.parent / "py.typed").write_text("partial\n")
