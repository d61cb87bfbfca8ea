"""Would a wavefront over an LSTM's two layers pay in NumPy? The forward of a 2-layer stack, timed two ways.

    OPENBLAS_NUM_THREADS=1 python bench/bench_lstm_wavefront.py [--rounds 30]

- **layer by layer**, as ``nn.LSTM`` runs now: layer 1's input projection (one GEMM), its step loop
  (``ops/recurrent.py``'s ``_lstm_steps``, keeping its gates for the gradient), layer 2's input projection over
  layer 1's T * B outputs (one GEMM), its step loop;
- **as a wavefront**: layer 2's step t runs beside layer 1's step t + 1, so each stage is one batched GEMM (layer 1's
  state product and layer 2's input and state products: twelve (B, H) @ (H, H) blocks) and one set of elementwise
  calls over both layers' blocks, (2, 4, B, H), with the same in-place formulas and the same kept gates.

The wavefront makes about 14 NumPy calls a stage where the two loops make 22 a step pair, but layer 2's input
projection runs as 32 small products instead of one GEMM, and the merged calls are on strided (2, 3, B, H) views.
Both results are checked against each other (the sums are rounded in another order, so to a tolerance). Times are
process CPU time per forward, medians of interleaved rounds; the prototype is not wired into ``nn.LSTM``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from shapetorch.ops import recurrent as R

T, B, E, H = 32, 16, 64, 128


def _gate_layout(gi: Any, bias: Any) -> Any:
    """``gi + bias`` as (T, 4, B, H) in the kernels' gate order (o, i, f, g), the sigmoid blocks negated (as
    ``_lstm_steps`` lays out its input)."""
    x = np.empty((gi.shape[0], 4, gi.shape[1], H), gi.dtype)
    for j, s in enumerate(R._torch_blocks(H)):
        if j < 3:
            np.subtract(np.negative(bias[s]), gi[..., s], out=x[:, j])
        else:
            np.add(gi[..., s], bias[s], out=x[:, j])
    return x


def layer_by_layer(x: Any, h0: Any, c0: Any, p: dict[str, Any]) -> Any:
    gi1 = (x.reshape(T * B, E) @ p["w_ih1"].T).reshape(T, B, 4 * H)
    s1 = R._lstm_steps(gi1, h0[0], c0[0], p["w_hh1"], (p["b_ih1"], p["b_hh1"]), False, True)
    y1 = R._split_steps(s1, gi1.shape)[0]
    gi2 = (y1[0].reshape(T * B, H) @ p["w_ih2"].T).reshape(T, B, 4 * H)
    s2 = R._lstm_steps(gi2, h0[1], c0[1], p["w_hh2"], (p["b_ih2"], p["b_hh2"]), False, True)
    return R._split_steps(s2, gi2.shape)[0][0]


def wavefront(x: Any, h0: Any, c0: Any, p: dict[str, Any]) -> Any:
    dt = x.dtype
    gi1 = (x.reshape(T * B, E) @ p["w_ih1"].T).reshape(T, B, 4 * H)
    x1 = _gate_layout(gi1, p["b_ih1"] + p["b_hh1"])
    b2 = p["b_ih2"] + p["b_hh2"]
    bias2 = np.empty((4, 1, H), dt)
    for j, blk in enumerate(R._torch_blocks(H)):
        (np.negative if j < 3 else np.positive)(b2[blk], out=bias2[j, 0])
    # (3, 4, H, H): layer 1's state weight, layer 2's input weight, layer 2's state weight, as the step kernels' blocks
    w = np.stack([R._step_weights(p["w_hh1"]), R._step_weights(p["w_ih2"]), R._step_weights(p["w_hh2"])])
    # stage n: [h1 after layer 1's step n - 1 (twice: it feeds both products), h2 after layer 2's step n - 2]
    states = np.empty((T + 2, 3, B, H), dt)
    states[0] = (h0[0], h0[0], h0[1])
    cells = np.empty((T + 2, 2, B, H), dt)
    cells[0] = c0
    gates = np.empty((T + 1, 2, 4, B, H), dt)  # kept, as the layer kernels keep theirs
    tcs = np.empty((T + 1, 2, B, H), dt)
    prod, tmp = np.empty((3, 4, B, H), dt), np.empty((2, B, H), dt)
    exp, recip, tanh, mul, add, matmul = np.exp, np.reciprocal, np.tanh, np.multiply, np.add, np.matmul
    for n in range(T + 1):
        st = states[n]
        matmul(st[:, None], w, prod)
        pre = gates[n]
        add(prod[0], x1[min(n, T - 1)], pre[0])  # layer 1's step n (stage T: a step past the end, unused)
        add(prod[1], prod[2], pre[1])  # layer 2's step n - 1 (stage 0: a step before the start, reset below)
        add(pre[1], bias2, pre[1])
        s3 = pre[:, :3]
        exp(s3, s3)
        add(s3, 1, s3)
        recip(s3, s3)
        g = pre[:, 3]
        tanh(g, g)
        c, c_new = cells[n], cells[n + 1]
        mul(pre[:, 2], c, c_new)
        mul(pre[:, 1], g, tmp)
        add(c_new, tmp, c_new)
        tanh(c_new, tcs[n])
        nxt = states[n + 1]
        mul(pre[:, 0], tcs[n], nxt[0::2])
        np.copyto(nxt[1], nxt[0])
        if n == 0:
            nxt[2], c_new[1] = h0[1], c0[1]
    return states[2:T + 2, 2]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    f = np.float32
    k = 1 / np.sqrt(H)
    p = {n: rng.uniform(-k, k, size=shape).astype(f) for n, shape in
         (("w_ih1", (4 * H, E)), ("w_hh1", (4 * H, H)), ("b_ih1", (4 * H,)), ("b_hh1", (4 * H,)),
          ("w_ih2", (4 * H, H)), ("w_hh2", (4 * H, H)), ("b_ih2", (4 * H,)), ("b_hh2", (4 * H,)))}
    x = rng.normal(size=(T, B, E)).astype(f)
    h0, c0 = rng.normal(size=(2, B, H)).astype(f), rng.normal(size=(2, B, H)).astype(f)
    a, b = layer_by_layer(x, h0, c0, p), wavefront(x, h0, c0, p)
    np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
    runs: dict[str, list[float]] = {"layer by layer": [], "wavefront": []}
    for r in range(args.rounds):
        order = list(runs) if r % 2 == 0 else list(reversed(runs))
        for name in order:
            fn = layer_by_layer if name == "layer by layer" else wavefront
            t0 = time.process_time()
            for _ in range(3):
                fn(x, h0, c0, p)
            runs[name].append((time.process_time() - t0) / 3)
    base = runs["layer by layer"]
    for name, ts in runs.items():
        ratio = statistics.median(t / u for t, u in zip(ts, base))
        print(f"{name:16s} {statistics.median(ts) * 1e3:7.2f} ms   / layer by layer {ratio:.3f}")
    print(f"(T={T}, B={B}, E={E}, H={H}, float32, {args.rounds} interleaved rounds of 3, process CPU time, "
          f"load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
