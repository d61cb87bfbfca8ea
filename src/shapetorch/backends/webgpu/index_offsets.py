"""The element offsets of advanced indexing, computed on the device from index tensors that stay there.

``a[idx]`` with integer index tensors on the device (``x[i]``, ``x[i, j]``, ``x[:, i]``, index assignment,
``index_put``, their gradients; and host index lists, uploaded as one small index tensor) needs, for each element of the result, the offset of the element of ``a`` it
reads or writes. One thread per result element computes it: its coordinates in the result, then per dim of ``a``
either the coordinate of the slice dim it comes from or the value of that dim's index tensor at the broadcast
index-space coordinates (negative values wrap, as torch), times the dim's stride. The result's layout is NumPy's
(torch's): the broadcast index dims replace the indexed dims where these are adjacent, and go first otherwise.

An index out of range is clamped here (so no thread reads or writes outside ``a``'s view) and reported by the
range check the op records (``check_range``), raised at the next sync as torch's IndexError. The offsets go to
the existing take/put kernels (one more dispatch and 4 bytes per result element); nothing is read back or uploaded.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .runtime import RT, WG, WArray

MAX_DIMS = 16  # coordinates held per thread (a result of more dims takes the host path)
_I32 = np.dtype(np.int32)


@functools.cache
def offsets_shader(k: int) -> str:
    """meta: [n, nd, shape[nd] (the result's), nda, base offset, per dim of a: (source word, stride, size), b0, nb,
    per index tensor: (offset, strides[nb]), first element, output start]. A source word is the result dim of a
    slice dim, or 0x80000000 | t for the index tensor t; strides and offsets are i32 bits (views may have negative
    strides). A dispatch makes elements ``first .. first + n`` (into ``offs[output start + j]``): a result larger
    than a binding takes one dispatch per run of elements."""
    binds = "\n".join(f"@group(0) @binding({2 + t}) var<storage, read> ix{t}: array<i32>;" for t in range(k))
    cases = "\n".join(f"    case {t}u: {{ return ix{t}[o]; }}" for t in range(k))
    return f"""@group(0) @binding(0) var<storage, read> prm: array<u32>;
@group(0) @binding(1) var<storage, read_write> offs: array<i32>;
{binds}
fn ix(t: u32, o: u32) -> i32 {{
  switch t {{
{cases}
    default: {{ return 0; }}
  }}
}}
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let j = gid.x + gid.y * nwg.x * {WG}u;
  if (j >= prm[0]) {{ return; }}
  let nd = prm[1];
  let E = 6u + nd + 3u * prm[2u + nd] + {k}u * (prm[5u + nd + 3u * prm[2u + nd]] + 1u);  // past the index tensors
  let i = prm[E] + j;
  var c: array<u32, {MAX_DIMS}>;
  var rem = i;
  for (var d = i32(nd) - 1; d >= 0; d = d - 1) {{
    let s = prm[2u + u32(d)];
    c[d] = rem % s;
    rem = rem / s;
  }}
  let T = 2u + nd;
  let nda = prm[T];
  var o = bitcast<i32>(prm[T + 1u]);
  let B = T + 2u + 3u * nda;
  let b0 = prm[B];
  let nb = prm[B + 1u];
  for (var d = 0u; d < nda; d = d + 1u) {{
    let w = prm[T + 2u + 3u * d];
    let size = i32(prm[T + 4u + 3u * d]);
    var coord = 0;
    if ((w & 0x80000000u) == 0u) {{
      coord = i32(c[w]);
    }} else {{
      let t = w & 0x7fffffffu;
      let kb = B + 2u + t * (nb + 1u);
      var io = bitcast<i32>(prm[kb]);
      for (var j = 0u; j < nb; j = j + 1u) {{
        io = io + i32(c[b0 + j]) * bitcast<i32>(prm[kb + 1u + j]);
      }}
      var v = ix(t, u32(io));
      if (v < 0) {{ v = v + size; }}
      coord = clamp(v, 0, size - 1);
    }}
    o = o + coord * bitcast<i32>(prm[T + 3u + 3u * d]);
  }}
  offs[prm[E + 1u] + j] = o;
}}"""


def _bstrides(x: WArray, shape: tuple[int, ...]) -> list[int]:
    lead = len(shape) - x.ndim
    return [0] * lead + [0 if s == 1 and n != 1 else st for s, st, n in zip(x.shape, x.stride, shape[lead:])]


def usable(a: WArray, index: tuple[Any, ...]) -> bool:
    """Whether ``index`` (NumPy's advanced index on ``a``) is full slices and integer arrays, device index tensors
    or host ones (``x[[0, 2, 5]]``: the list is uploaded once, in place of an offset per result element), with
    nothing that needs the host (a boolean mask)."""
    if a.ndim > MAX_DIMS or len(index) > a.ndim:
        return False
    arrays = 0
    for it in index:
        if isinstance(it, WArray) or (isinstance(it, np.ndarray) and it.dtype.kind in "iu"):
            arrays += 1
        elif not (isinstance(it, slice) and it == slice(None)):
            return False
    return arrays > 0


def offsets(a: WArray, index: tuple[Any, ...]) -> WArray | None:
    """The offsets (int32, in the result's shape) of ``a[index]`` in ``a``'s buffer; ``index`` holds one item per
    leading dim of ``a``: ``slice(None)``, or an integer array (a device WArray or a NumPy array, uploaded). None
    for a result of more than :data:`MAX_DIMS` dims (the caller takes the host path)."""
    items = list(index) + [slice(None)] * (a.ndim - len(index))
    given = [(d, it) for d, it in enumerate(items) if not isinstance(it, slice)]
    bshape = np.broadcast_shapes(*(tuple(x.shape) for _, x in given))
    dims = [d for d, _ in given]
    adjacent = dims == list(range(dims[0], dims[0] + len(dims)))
    b0 = dims[0] if adjacent else 0
    nb = len(bshape)
    slices = [d for d in range(a.ndim) if d not in dims]
    # the result's dims: the slice dims before the index dims, the broadcast index dims, then the rest
    before = [d for d in slices if d < b0] if adjacent else []
    after = [d for d in slices if d not in before]
    shape = tuple([a.shape[d] for d in before] + list(bshape) + [a.shape[d] for d in after])
    if len(shape) > MAX_DIMS:
        return None
    out = RT.empty(shape, _I32)
    if out.st is None:
        return out
    arrays = [(d, x if isinstance(x, WArray) else RT.upload(np.asarray(x).astype(np.int32))) for d, x in given]
    source = {d: i for i, d in enumerate(before)}
    source.update({d: len(before) + nb + i for i, d in enumerate(after)})
    meta: list[int] = [out.size, len(shape), *shape, a.ndim, a.offset]
    for d in range(a.ndim):
        word = source[d] if d in source else 0x80000000 | dims.index(d)
        meta += [word, a.stride[d], a.shape[d]]
    meta += [len(before), nb]
    bufs = [out.st.buf]
    for _, x in arrays:
        assert x.st is not None
        meta += [x.offset, *_bstrides(x, tuple(bshape))]
        bufs.append(x.st.buf)
    from . import chunks
    from .kernels import _grid

    n = out.size
    step = chunks.flat_budget(4)  # the offsets by runs of elements (the index tensors are bound whole)
    for e0 in range(0, n, step):
        e1 = min(n, e0 + step)
        ob, o0 = chunks.flat_window(out.st, 4, e0, e1)
        RT.dispatch(offsets_shader(len(arrays)), [ob, *bufs[1:]], [e1 - e0, *meta[1:], e0, e0 - o0], _grid(e1 - e0))
    return out
