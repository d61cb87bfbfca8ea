"""The programs suite: ordinary PyTorch programs (``tests/programs/*.py``), each run as written with torch
and again with shapetorch in torch's place, from the same weights and data; their printed losses and
outputs must agree. See ``tests/programs/_harness.py`` for how the two runs are kept identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from programs._harness import compare, run_both

PROGRAMS = sorted(p for p in (Path(__file__).parent / "programs").glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_runs_as_with_torch(path: Path) -> None:
    theirs, ours = run_both(path.read_text(), str(path))
    assert theirs.strip(), "the program printed nothing to compare"
    compare(theirs, ours)


def test_unseeded_program_is_deterministic() -> None:
    """A program that never seeds still gets the same initial weights whatever ran before it in the process
    (the order-sensitivity gaussian_regression showed): the harness seeds each library's own generator."""
    import torch

    source = "import torch\nlayer = torch.nn.Linear(4, 3)\nprint(f'{layer(torch.ones(1, 4)).sum().item():.6f}')\n"
    first = run_both(source, "<unseeded>")
    torch.rand(100)  # what another test would leave behind in torch's generator
    second = run_both(source, "<unseeded>")
    assert first == second
    compare(*first)
