"""The CPU kernels' pool of reusable arrays (``backends.array_pool``): an array is handed out again only once nothing
else references it, per thread, within the limits on sizes, arrays and bytes, least recently used dropped first.
GELU's and the recurrent layers' values with several graphs alive are tested with those ops (test_nn_fused.py)."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import shapetorch as st
from shapetorch.backends import array_pool

pytestmark = pytest.mark.skipif(not array_pool._COUNTS_KNOWN, reason="the pool allocates every call here")

SHAPE = (64, 512)  # 128 KiB of float32: above the pool's minimum


def addr(a: Any) -> int:
    return int(a.__array_interface__["data"][0])


@pytest.fixture(autouse=True)
def _fresh_pool() -> Any:
    """Each test starts from an empty pool on this thread (and leaves one)."""
    array_pool._arrays().clear()
    yield
    array_pool._arrays().clear()


def test_reused_only_once_nothing_else_holds_it() -> None:
    a = array_pool.empty(SHAPE, np.float32)
    first = addr(a)
    del a
    b = array_pool.empty((512, 64), np.float32)  # the same size and dtype, another shape: the same memory
    assert addr(b) == first and b.shape == (512, 64) and b.flags.c_contiguous
    view = b[1:]
    del b
    c = array_pool.empty(SHAPE, np.float32)
    assert not np.shares_memory(c, view)  # a view keeps it out
    kept = st.Tensor._make(c, st.device("cpu"))  # a tensor on the array handed out: a kernel's result
    del c
    d = array_pool.empty(SHAPE, np.float32)
    assert not np.shares_memory(d, kept._data) and not np.shares_memory(d, view)
    other_dtype = array_pool.empty(SHAPE, np.int32)  # same bytes, another dtype: never the same array
    assert not any(np.shares_memory(other_dtype, x) for x in (d, view, kept._data))
    del view
    e = array_pool.empty(SHAPE, np.float32)  # the view gone: its array is free again
    assert addr(e) == first


def test_a_held_array_is_never_handed_out_twice() -> None:
    """Many arrays held at once, of the pool's sizes: all of them distinct memory."""
    held = [array_pool.empty(SHAPE, np.float32) for _ in range(array_pool.MAX_ARRAYS + 4)]
    for i, a in enumerate(held):
        a.fill(i)
    assert all((a == i).all() for i, a in enumerate(held))
    assert len({addr(a) for a in held}) == len(held)


def test_per_thread() -> None:
    mine = array_pool.empty(SHAPE, np.float32)
    first = addr(mine)
    del mine
    other: list[Any] = []
    thread = threading.Thread(target=lambda: other.append(array_pool.empty(SHAPE, np.float32)))
    thread.start()
    thread.join()
    assert addr(other[0]) != first  # the other thread's pool is its own, though this one's array is free
    assert addr(array_pool.empty(SHAPE, np.float32)) == first


def test_sizes_outside_the_limits_are_not_kept() -> None:
    small = array_pool.empty((4, 4), np.float32)
    assert array_pool.MIN_BYTES > small.nbytes
    large = array_pool.empty((array_pool.MAX_BYTES // 4 + 1,), np.float32)
    assert array_pool.kept() == []
    assert small.shape == (4, 4) and large.dtype == np.float32


def test_caps_on_arrays_and_bytes_drop_the_least_recently_used() -> None:
    arrays = [array_pool.empty((n, 1024), np.float32) for n in range(16, 16 + array_pool.MAX_ARRAYS)]
    assert [a.size for a in array_pool.kept()] == [a.size for a in arrays]
    sizes = [a.size for a in arrays]
    del arrays
    reused = array_pool.empty((16, 1024), np.float32)  # the oldest, used again: now the most recent
    one_more = array_pool.empty((40, 1024), np.float32)  # past the count: the least recently used goes
    assert len(array_pool.kept()) == array_pool.MAX_ARRAYS
    assert [a.size for a in array_pool.kept()] == [*sizes[2:], *sizes[:1], one_more.size]
    del reused, one_more
    quarter = array_pool.MAX_BYTES // 4
    big = [array_pool.empty((quarter // 4,), np.float32) for _ in range(4)]  # the whole byte cap in 4 arrays
    assert sum(a.nbytes for a in array_pool.kept()) <= array_pool.MAX_BYTES
    assert [a.size for a in array_pool.kept()] == [b.size for b in big]  # everything older dropped
    where = {addr(a) for a in big}
    del big
    assert addr(array_pool.empty((quarter // 4,), np.float32)) in where


def test_nothing_kept_where_counts_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(array_pool, "_COUNTS_KNOWN", False)
    a = array_pool.empty(SHAPE, np.float32)
    del a
    assert array_pool.kept() == []


def test_the_limits_are_inclusive_at_both_ends() -> None:
    """An array of exactly ``MIN_BYTES`` and one of exactly ``MAX_BYTES`` are kept; a float32 fewer than the minimum
    is not."""
    below = array_pool.empty(((array_pool.MIN_BYTES - 4) // 4,), np.float32)
    assert array_pool.kept() == []
    at_min = array_pool.empty((array_pool.MIN_BYTES // 4,), np.float32)
    assert [a.nbytes for a in array_pool.kept()] == [array_pool.MIN_BYTES]
    del at_min
    at_max = array_pool.empty((array_pool.MAX_BYTES // 4,), np.float32)  # (np.empty: no page is touched)
    assert [a.nbytes for a in array_pool.kept()] == [array_pool.MAX_BYTES]  # alone at the cap: the rest dropped
    assert below.size == (array_pool.MIN_BYTES - 4) // 4 and at_max.flags.c_contiguous


def test_the_byte_cap_drops_only_as_many_as_it_must() -> None:
    """Over the byte cap, the least recently used arrays are dropped one at a time until the total fits: a large old
    one going is enough, the smaller ones after it stay."""
    half = array_pool.MAX_BYTES // 2
    extra = array_pool.MIN_BYTES
    old = array_pool.empty((half // 4,), np.float32)
    small = array_pool.empty((extra // 4,), np.float32)
    new = array_pool.empty(((half + extra) // 4,), np.float32)  # the three: the cap and one small array's bytes over
    assert [a.nbytes for a in array_pool.kept()] == [extra, half + extra]
    assert old.size and small.size and new.size


def test_the_limits_are_the_documented_ones() -> None:
    """docs/compatibility.md ("Memory") states the pool's limits to users: they are the module's."""
    from pathlib import Path

    text = " ".join((Path(__file__).resolve().parent.parent / "docs" / "compatibility.md").read_text().split())
    said = (f"under {array_pool.MIN_BYTES >> 10} KiB are never kept, and a thread keeps at most "
            f"{array_pool.MAX_ARRAYS} arrays and {array_pool.MAX_BYTES >> 20} MiB")
    assert said in text
    assert array_pool.MIN_BYTES % 1024 == 0 and array_pool.MAX_BYTES % (1 << 20) == 0
