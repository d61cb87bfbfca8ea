"""``shapetorch.cuda`` answers as CPU-only torch does, and what needs a device is a coded DeviceError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import shapetorch as st

REPORTS: dict[str, Callable[[Any], Any]] = {
    "is_available": lambda c: c.is_available(),
    "device_count": lambda c: c.device_count(),
    "is_initialized": lambda c: c.is_initialized(),
    "is_bf16_supported": lambda c: c.is_bf16_supported(),
    "memory": lambda c: (c.memory_allocated(), c.max_memory_allocated(), c.memory_reserved(), c.max_memory_reserved()),
    "no_ops": lambda c: (c.manual_seed(0), c.manual_seed_all(0), c.seed(), c.seed_all(), c.empty_cache()),
}


def test_synchronize_is_a_no_op() -> None:
    """CPU-only torch raises here; a program that times its steps with it runs on shapetorch's CPU."""
    assert st.cuda.synchronize() is None
    assert st.cuda.reset_peak_memory_stats() is None


@pytest.mark.parametrize("case", REPORTS)
def test_reports_as_cpu_only_torch(case: str) -> None:
    assert REPORTS[case](st.cuda) == REPORTS[case](torch.cuda)


NEEDS_DEVICE: dict[str, Callable[[], Any]] = {
    "current_device": st.cuda.current_device,
    "get_device_name": lambda: st.cuda.get_device_name(0),
    "get_device_properties": lambda: st.cuda.get_device_properties(0),
    "set_device": lambda: st.cuda.set_device(0),
    "device": lambda: st.cuda.device(0),
    "init": st.cuda.init,
    "Tensor.cuda": lambda: st.ones(2).cuda(),
    "Module.cuda": lambda: st.nn.Linear(2, 2).cuda(),
}


@pytest.mark.parametrize("case", NEEDS_DEVICE)
def test_what_needs_a_device_is_a_coded_device_error(case: str) -> None:
    with pytest.raises(st.DeviceError) as e:
        NEEDS_DEVICE[case]()
    assert isinstance(e.value, RuntimeError)
    assert e.value.code == "device_error_cuda_unavailable"


def test_the_tutorial_idiom_picks_the_cpu() -> None:
    device = "cuda" if st.cuda.is_available() else "cpu"
    model = st.nn.Linear(3, 2).to(device)
    assert model(st.ones(1, 3, device=device)).device.type == "cpu"
