"""The programs suite on WebGPU: each float32 program of ``tests/programs/`` runs with shapetorch's default
device set to "webgpu" (every tensor the program makes without a device lands there) and must print what
torch prints on the CPU, as in ``test_programs.py``.

Skipped without a WebGPU adapter, unless SHAPETORCH_REQUIRE_WEBGPU=1 (then it fails), as test_webgpu.py.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from programs._harness import compare, run_both
from test_webgpu import webgpu  # noqa: F401  (the module fixture: skip or fail without an adapter)

PROGRAMS = sorted(p for p in (Path(__file__).parent / "programs").glob("*.py") if not p.name.startswith("_"))

# Programs that are not float32 programs: WebGPU has no float64 or bfloat16, and these make such tensors as a
# torch user writes them (torch.tensor of float64 NumPy data, gradcheck in double, CPU bfloat16 autocast).
NOT_FLOAT32 = {
    "amp_compile": "bfloat16 autocast with device_type='cpu' (WebGPU has no bfloat16)",
    "module_habits": "model.double() and a float64 forward",
    "tensor_toolbox": "a.to(torch.float64)",
    "custom_autograd_function": "gradcheck in float64 (torch.double)",
    "custom_dataset_collate": "collates float64 NumPy arrays and Python floats into float64 tensors",
    "kaggle_tabular": "torch.tensor of float64 NumPy values (pos_weight, labels) makes float64 tensors",
    "gp_regression": "a Gaussian process in float64 (dtype=torch.float64 data and hyperparameters)",
    "int8_quantization": "int8 weights and activations (WebGPU has no int8: docs/runtimes.md)",
    "gaussian_regression": "runs in float64 (its L-BFGS phase carries float32 rounding to the fourth digit)",
    "pagerank_power": "checks the Google matrix's eigenvector with torch.linalg.eig(G.double()) (float64), and "
                      "dedupes its edge list with torch.unique(dim=1), whose size depends on the values",
}

# float32 programs that use what the WebGPU runtime refuses or cannot follow to the printed digits, with why.
NOT_ON_WEBGPU: dict[str, str] = {}

FLOAT32 = [p for p in PROGRAMS if p.stem not in NOT_FLOAT32 and p.stem not in NOT_ON_WEBGPU]
# Every other program runs from test_programs_webgpu_second_half.py: on lavapipe a program takes 5-40 s, and the
# suite's workers take whole files (--dist loadfile), so two files let both workers share them.
FIRST_HALF, SECOND_HALF = FLOAT32[0::2], FLOAT32[1::2]


def test_the_exclusions_name_programs() -> None:
    assert set(NOT_FLOAT32) | set(NOT_ON_WEBGPU) <= {p.stem for p in PROGRAMS}


@pytest.mark.parametrize("path", FIRST_HALF, ids=[p.stem for p in FIRST_HALF])
def test_program_runs_on_webgpu_as_with_torch(path: Path) -> None:
    run_on_webgpu(path)


def run_on_webgpu(path: Path) -> None:
    from shapetorch.backends.webgpu.runtime import RT

    before = RT.n_dispatch
    theirs, ours = run_both(path.read_text(), str(path), device="webgpu")
    assert theirs.strip(), "the program printed nothing to compare"
    # a tensor printed from the GPU names its device, as torch's cuda tensors do (on a line of its own when the
    # last row leaves no room); the numbers must agree
    compare(theirs, re.sub(r",\n *device='webgpu'\)", ")", ours).replace(", device='webgpu'", ""))
    # the work ran on the GPU: at least one dispatch per line the program printed (mlp_tutorial makes its data
    # there, then moves model and data to the "cpu" its device line picks without CUDA)
    assert RT.n_dispatch - before >= len(theirs.splitlines())
