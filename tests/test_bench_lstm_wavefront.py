"""bench/bench_lstm_wavefront.py's prototype (a 2-layer LSTM forward as a wavefront over the layers) gives the
layer-by-layer forward's outputs on small sizes, both directions of the comparison run. No timing is asserted."""

from __future__ import annotations

import numpy as np
import pytest


def test_wavefront_prototype_matches_the_layer_kernels(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from bench import bench_lstm_wavefront as bench

    for name, value in (("T", 5), ("B", 3), ("E", 2), ("H", 4)):
        monkeypatch.setattr(bench, name, value)
    rng = np.random.default_rng(1)
    p = {n: rng.normal(size=shape).astype(np.float32) for n, shape in
         (("w_ih1", (16, 2)), ("w_hh1", (16, 4)), ("b_ih1", (16,)), ("b_hh1", (16,)),
          ("w_ih2", (16, 4)), ("w_hh2", (16, 4)), ("b_ih2", (16,)), ("b_hh2", (16,)))}
    x = rng.normal(size=(5, 3, 2)).astype(np.float32)
    h0, c0 = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(2, 3, 4)).astype(np.float32)
    a, b = bench.layer_by_layer(x, h0, c0, p), bench.wavefront(x, h0, c0, p)
    assert a.shape == b.shape == (5, 3, 4)
    np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    bench.main(["--rounds", "1"])
    out = capsys.readouterr().out
    assert "layer by layer" in out and "wavefront" in out
