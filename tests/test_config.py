"""Global state and configuration (issue 6, group 2) and memory statistics, against torch's behaviour."""

import pytest
import torch

import shapetorch as st


@pytest.fixture(autouse=True)
def _restore():
    yield
    st.set_default_device(None)
    st.use_deterministic_algorithms(False)
    st.set_float32_matmul_precision("highest")
    st.set_warn_always(False)


def test_default_device_drives_factories():
    assert st.get_default_device() == st.device("cpu")
    st.set_default_device("cpu")
    assert st.zeros(2).device == st.device("cpu")
    with pytest.raises(st.DeviceError):
        st.set_default_device("tpu")


@pytest.mark.parametrize(("mode", "enabled", "warn_only"), [("default", False, False), ("warn", True, True),
                                                            ("error", True, False), (2, True, False)])
def test_deterministic_debug_mode_like_torch(mode, enabled, warn_only):
    st.set_deterministic_debug_mode(mode)
    torch.set_deterministic_debug_mode(mode)
    try:
        assert st.are_deterministic_algorithms_enabled() == torch.are_deterministic_algorithms_enabled() == enabled
        assert st.is_deterministic_algorithms_warn_only_enabled() == warn_only
        assert st.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    finally:
        torch.set_deterministic_debug_mode(0)


def test_matmul_precision_and_threads():
    st.set_float32_matmul_precision("medium")
    assert st.get_float32_matmul_precision() == "medium"
    with pytest.raises(st.ShapetorchError) as e:
        st.set_float32_matmul_precision("low")
    assert e.value.code == "argument_error_invalid"
    st.set_num_threads(3)
    assert st.get_num_threads() == 3
    with pytest.raises(st.ShapetorchError):
        st.set_num_threads(0)


def test_defaults_match_torch():
    assert st.is_warn_always_enabled() is torch.is_warn_always_enabled() is False
    assert st.get_autocast_cpu_dtype().name == str(torch.get_autocast_cpu_dtype()).split(".")[1]
    assert st.is_autocast_cache_enabled() is torch.is_autocast_cache_enabled()
    assert st.is_autocast_enabled("cpu") is torch.is_autocast_enabled("cpu")


def test_autocast_runs_matmul_in_bfloat16_like_torch():
    a, b = st.randn(3, 4), st.randn(4, 5)
    ta, tb = torch.from_numpy(a.numpy().copy()), torch.from_numpy(b.numpy().copy())
    with st.autocast("cpu"), torch.autocast("cpu"):
        ours, theirs = a @ b, ta @ tb
        assert st.is_autocast_enabled("cpu")
        assert (a + b[:3, :4]).dtype is st.float32  # elementwise ops are not autocast
    assert ours.dtype.name == str(theirs.dtype).split(".")[1] == "bfloat16"
    assert not st.is_autocast_enabled("cpu")
    assert (a @ b).dtype is st.float32


def test_cpu_memory_stats_follow_allocations():
    st.reset_peak_memory_stats("cpu")
    before = st.memory_allocated("cpu")
    x = st.ones(500, 500, dtype=st.float64)
    assert st.memory_allocated("cpu") - before >= 500 * 500 * 8
    del x
    assert st.max_memory_allocated("cpu") - before >= 500 * 500 * 8
    assert "allocated_bytes" in st.memory_summary("cpu")
    st.empty_cache("cpu")
    st.synchronize("cpu")
    st.stop_cpu_memory_tracking()
