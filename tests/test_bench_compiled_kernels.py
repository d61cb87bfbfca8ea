"""bench/bench_compiled_kernels.py runs where numba and numexpr are not installed (as in CI): it says so and times
the rest. No timing is asserted."""

from __future__ import annotations

import importlib.util

import pytest

pytest.importorskip("torch")


def test_runs_and_names_what_is_missing(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from bench import bench_compiled_kernels as bench

    for name, shape in (("GELU_SHAPE", (2, 4, 8)), ("LN_SHAPE", (4, 8)), ("SOFTMAX_SHAPE", (4, 16))):
        monkeypatch.setattr(bench, name, shape)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("numba", "numexpr") else real(name, *a))
    assert bench.main(["--no-probe", "--repeat", "1", "--min-time", "0.001"]) == 0
    out = capsys.readouterr().out
    assert "not importable, not measured: numba, numexpr" in out
    assert out.count("numpy now") == 6 and "numba" not in out.split("not measured")[1].split("\n", 1)[1]
