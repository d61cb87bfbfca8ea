"""``randperm`` on the device: random 32-bit keys from the counter-based generator, sorted with their positions.

Element ``i`` gets the key ``w.x`` of Philox4x32-10 at the counter ``(i, 0, offset)`` under the key ``seed`` (the
generator of the other draws), and the positions are sorted by (key, position) with a bitonic network over the
next power of two ``P`` (the padding's keys are the largest, after every element): log2(P)·(log2(P) + 1) / 2
dispatches of ``P / 2`` compare-exchanges each (136 for ``P = 65,536``), O(P log² P) work in all. Equal keys (about n² / 2^33 pairs) keep their positions' order, so the
permutation is uniform but for that tie bias.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from . import codegen as G
from . import kernels as K
from .runtime import RT, WG, WArray

_I32 = np.dtype(np.int32)


@functools.cache
def _init_shader() -> str:
    """keys[i] = a random word (i < n) or 0xffffffff (the padding), pos[i] = i. meta: [P, n, key, offset]."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> pos: array<u32>;
{G.PHILOX}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let i = gid.x + gid.y * nwg.x * {WG}u;
  if (i >= prm[0]) {{ return; }}
  var k = 0xffffffffu;
  if (i < prm[1]) {{ k = philox(vec4<u32>(i, 0u, prm[4], prm[5]), vec2<u32>(prm[2], prm[3])).x; }}
  keys[i] = k;
  pos[i] = i;
}}"""


@functools.cache
def _step_shader() -> str:
    """One stage (block ``k``, distance ``j``) of the bitonic network: thread ``t`` compare-exchanges the pair
    (i, i + j), i being the t-th index whose bit ``j`` is clear; ascending where bit ``k`` of i is clear.
    meta: [P / 2, k, j]."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> keys: array<u32>;
@group(0) @binding(2) var<storage, read_write> pos: array<u32>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let t = gid.x + gid.y * nwg.x * {WG}u;
  if (t >= prm[0]) {{ return; }}
  let j = prm[2];
  let i = (t / j) * 2u * j + t % j;
  let l = i + j;
  let ki = keys[i]; let kl = keys[l]; let pi = pos[i]; let pl = pos[l];
  let greater = ki > kl || (ki == kl && pi > pl);
  if (greater == ((i & prm[1]) == 0u)) {{
    keys[i] = kl; keys[l] = ki; pos[i] = pl; pos[l] = pi;
  }}
}}"""


def randperm(n: int, dtype: np.dtype[Any], seed: int, offset: int) -> WArray:
    """A random permutation of ``range(n)`` in ``dtype``, drawn and sorted on the device."""
    if n <= 1:
        return K.arange(0, 1, n, dtype) if K._kind(dtype) == "i" else K.cast(K.arange(0, 1, n, _I32), dtype)
    P = 1 << (n - 1).bit_length()
    keys, pos = RT.empty((P,), _I32), RT.empty((P,), _I32)
    assert keys.st is not None and pos.st is not None
    bufs = [keys.st.buf, pos.st.buf]
    if RT.recorder is not None:  # (a captured graph draws fresh numbers at each replay)
        RT.recorder.random(2)
    RT.dispatch(_init_shader(), bufs, [P, n, seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, offset & 0xFFFFFFFF,
                                       (offset >> 32) & 0xFFFFFFFF], K._grid(P))
    k = 2
    while k <= P:
        j = k // 2
        while j >= 1:
            RT.dispatch(_step_shader(), bufs, [P // 2, k, j], K._grid(P // 2))
            j //= 2
        k *= 2
    return K.cast(K._view(pos, (n,), (1,)), dtype)
