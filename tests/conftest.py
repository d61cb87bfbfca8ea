"""Make the shared test helpers (``tests/_oracle.py``) importable as ``_oracle``."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
# One thread per worker for the libraries' own pools (torch's OpenMP, NumPy's OpenBLAS), set before either is
# imported: the suite runs a worker per core (CI's ``-n 2`` on two cores), and torch's OpenMP threads spin while
# they wait, so two threads per worker burned three to four times the CPU of one on the tiny tensors most tests
# use (a user program's torch run: 17 s of CPU against 4.4). Tests of shapetorch's own thread pool set their counts.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# every public op with a rule in ops/_rule_results.py checks its result's shape and dtype against the
# rules on every call of the suite: each runtime test is also a test of the static result shapes
os.environ.setdefault("SHAPETORCH_CHECK_RULES", "1")

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis profiles (HYPOTHESIS_PROFILE=...): "ci" is derandomized, so a run is reproducible and a
# failure shows the same example to everyone; "dev" explores new random examples on each run; "deep"
# runs many more examples where a test does not fix its own count. CI uses "ci" (.ci/run sets it;
# elsewhere the CI variable selects it).
settings.register_profile("ci", derandomize=True, deadline=None, database=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None, print_blob=True)
settings.register_profile("deep", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture(autouse=True)
def _torch_default_dtype_as_ours(request):
    """The torch oracle (tests/test_ops_*.py) must use shapetorch's default dtype, whatever other modules set."""
    if not request.node.module.__name__.startswith("test_ops_"):
        yield
        return
    import torch

    import shapetorch as st

    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, st.get_default_dtype().name))
    yield
    torch.set_default_dtype(old)
