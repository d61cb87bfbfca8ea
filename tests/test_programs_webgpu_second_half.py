"""The other half of the programs suite on WebGPU (test_programs_webgpu.py says why it is two files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_programs_webgpu import SECOND_HALF, run_on_webgpu
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)


@pytest.mark.parametrize("path", SECOND_HALF, ids=[p.stem for p in SECOND_HALF])
def test_program_runs_on_webgpu_as_with_torch(path: Path) -> None:
    run_on_webgpu(path)
