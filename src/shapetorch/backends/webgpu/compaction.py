"""``nonzero`` on the device, and so boolean-mask indexing (``x[mask]``, ``masked_select``, ``index_put`` with a
mask), with one read back: the count.

The result's length is the number of nonzero elements, which the host needs to size it (torch syncs there too).
The mask (any dtype, any strides) becomes 0/1 as int32 in one kernel, the blocked scan (:mod:`.scans`) gives each
element its running count, the last one is read back (4 bytes, the one sync), and one thread per element writes
the coordinates of a nonzero element at row ``running count - 1`` of the ``(count, ndim)`` result. A mask index
then becomes its coordinate columns, device index tensors, and takes the device path of integer indexing.
"""

from __future__ import annotations

import functools

import numpy as np

from . import chunks
from .runtime import RT, WG, WArray, to_host

_I32 = np.dtype(np.int32)
_I64 = np.dtype(np.int64)


@functools.cache
def scatter_shader() -> str:
    """meta: [n, nd, shape[nd], first element, flags start, sums start, output window's first element, its
    length]: element e (row-major; a dispatch takes ``first .. first + n``) with a nonzero flag writes its
    coordinates at row ``cum[e] - 1`` of the contiguous ``(count, nd)`` output, those in the bound window."""
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<i32>;
@group(0) @binding(2) var<storage, read> flag: array<i32>;
@group(0) @binding(3) var<storage, read> cum: array<i32>;
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let j = gid.x + gid.y * nwg.x * {WG}u;
  if (j >= prm[0]) {{ return; }}
  let nd = prm[1];
  let K = 2u + nd;
  if (flag[prm[K + 1u] + j] == 0) {{ return; }}
  let row = u32(cum[prm[K + 2u] + j] - 1) * nd - prm[K + 3u];
  var rem = prm[K] + j;
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let s = prm[2u + u32(d)];
    let w = row + u32(d);
    if (w < prm[K + 4u]) {{ out[w] = i32(rem % s); }}
    rem = rem / s;
  }}
}}"""


def nonzero(a: WArray) -> WArray:
    """The ``(count, ndim)`` int64 coordinates of ``a``'s nonzero elements in row-major order (``a.ndim >= 1``)."""
    from . import kernels as K
    from . import scans

    n = a.size
    if n == 0 or a.st is None:
        return RT.empty((0, a.ndim), _I64)
    zero = {"f": "0.0", "i": "0", "u": "0u"}[K._st(a.dtype)[0]]
    flag = K.elementwise(f"select(0, 1, a != {zero})", _I32, [("a", a, a.dtype)], a.shape)
    flat = K.reshape_kernel(flag, (n,))
    cum = scans.scan_rows("cumsum", flat)
    count = int(to_host(K.basic_index(cum, (slice(n - 1, n),)))[0])  # the one read back
    out = RT.empty((count, a.ndim), _I64)
    if count == 0 or out.st is None:
        return out
    assert flat.st is not None and cum.st is not None
    targets = chunks.windows(out)
    for e0 in range(0, n, chunks.flat_budget(4)):  # the flags and sums by runs, the output over its windows
        e1 = min(n, e0 + chunks.flat_budget(4))
        fb, f0 = chunks.flat_window(flat.st, 4, flat.offset + e0, flat.offset + e1)
        cb, c0 = chunks.flat_window(cum.st, 4, cum.offset + e0, cum.offset + e1)
        for t, length in targets:
            assert t.st is not None
            meta = [e1 - e0, a.ndim, *a.shape, e0, flat.offset + e0 - f0, cum.offset + e0 - c0, -t.offset, length]
            RT.dispatch(scatter_shader(), [t.st.buf, fb, cb], meta, K._grid(e1 - e0))
    return out


def mask_columns(a: WArray) -> list[WArray]:
    """The coordinate columns of ``a``'s nonzero elements: the integer indices equal to the mask ``a``."""
    from . import kernels as K

    coords = nonzero(a)
    return [K.basic_index(coords, (slice(None), d)) for d in range(a.ndim)]
