"""The WebGPU runtime: one device per process, pooled buffers, batched dispatches, strided arrays.

``wgpu`` is imported here, so this module loads only when a WebGPU tensor is first made (or when
``is_webgpu_available()`` probes). Everything a kernel needs goes through :data:`RT`:

- ``RT.alloc(nbytes)`` hands out a pooled storage buffer; a :class:`Storage` returns its buffer to
  the pool when it is garbage-collected, but only at the next submit, so that a buffer still named by
  recorded (unsubmitted) dispatches is never rewritten by an upload.
- ``RT.dispatch(wgsl, buffers, meta, grid)`` records one compute dispatch into the open compute pass (held
  until the next dispatch, so that an in-place op can still redirect its output: ``take_held``). Its small
  parameter block (shapes, strides, offsets, scalars) is appended to an arena that is written with one
  ``write_buffer`` just before the batch is submitted.
- ``RT.flush()`` submits the batch: at reads (``.numpy()``, ``.item()``, printing), every ``submit_every``
  dispatches, and when an optimizer step starts (``kernels._StepGroup``).
"""

from __future__ import annotations

import heapq
import math
import os
import re
import struct
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..._errors import fail

wgpu: Any = None  # imported by Runtime.init (not when WebGPU is disabled by the environment)

WG = 256  # elementwise workgroup size
ARENA_BYTES = 1 << 16  # parameter arena per batch
# Dispatches per submit: a longer step is submitted in parts, so the device starts on the first part while the
# host records the rest (SHAPETORCH_WEBGPU_SUBMIT_EVERY overrides it; docs/runtimes.md has the measured cost).
SUBMIT_EVERY = int(os.environ.get("SHAPETORCH_WEBGPU_SUBMIT_EVERY", "128"))
MAX_GROUPS = 8192  # cached bind groups (the cache is emptied when full)
_BINDING = re.compile(r"@binding\((\d+)\) var<storage, (read|read_write)>")
# Free buffers kept for reuse beyond this many bytes are destroyed (SHAPETORCH_WEBGPU_POOL_MB overrides it).
POOL_LIMIT = int(os.environ.get("SHAPETORCH_WEBGPU_POOL_MB", "256")) << 20
# The adapter limits the runtime checks, by attribute: WebGPU's name, and the default until a device is made.
_LIMITS = {"max_groups": "max-compute-workgroups-per-dimension",
           "max_storage_buffers": "max-storage-buffers-per-shader-stage",
           "max_binding": "max-storage-buffer-binding-size", "max_buffer": "max-buffer-size",
           "max_wg_storage": "max-compute-workgroup-storage-size",
           "max_invocations": "max-compute-invocations-per-workgroup"}
_LIMIT_DEFAULTS = {"max_groups": 65535, "max_storage_buffers": 8, "max_binding": 128 << 20, "max_buffer": 256 << 20,
                   "max_wg_storage": 16384, "max_invocations": 256}

# logical NumPy dtype -> (WGSL storage type, WGSL compute type, host storage dtype)
STORAGE: dict[str, tuple[str, str, np.dtype[Any]]] = {
    "float32": ("f32", "f32", np.dtype(np.float32)),
    "float16": ("f16", "f32", np.dtype(np.float16)),
    "int32": ("i32", "i32", np.dtype(np.int32)),
    "int64": ("i32", "i32", np.dtype(np.int32)),  # stored as int32, range-checked on upload
    "bool": ("u32", "u32", np.dtype(np.uint32)),
    # interleaved (real, imag) float32 pairs, NumPy's complex64 layout: kernels see one vec2 per element
    "complex64": ("vec2<f32>", "vec2<f32>", np.dtype(np.complex64)),
}
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


_SIZE_CLASS: dict[int, int] = {}  # request bytes -> its size class (Runtime.size_class; a step meets few sizes)
_STORAGE_OF: dict[np.dtype[Any], tuple[str, str, np.dtype[Any]]] = {np.dtype(k): v for k, v in STORAGE.items()}
_F16 = np.dtype(np.float16)


def supported_dtypes(has_f16: bool) -> list[str]:
    return [d for d in ("float32", "float16", "int32", "int64", "bool", "complex64") if d != "float16" or has_f16]


class Storage:
    """A GPU buffer owned by one or more arrays (views share it)."""

    __slots__ = ("__weakref__", "buf", "nbytes", "serial")

    def __init__(self, buf: Any, nbytes: int, serial: int = 0) -> None:
        self.buf = buf
        self.nbytes = nbytes  # the pooled size (>= what the array needs)
        self.serial = serial  # the order the buffer was made in (its place in the free lists, see Runtime.alloc)

    def __del__(self) -> None:
        try:
            RT.release(self.buf, self.nbytes, self.serial)
        except Exception:  # interpreter shutdown
            pass


class BufferRange:
    """A window of a buffer, bound in place of the whole buffer (``RT.bind_group``): how a kernel reaches a
    tensor larger than the adapter's ``max-storage-buffer-binding-size``, one chunk at a time."""

    __slots__ = ("buffer", "offset", "size")

    def __init__(self, buffer: Any, offset: int, size: int) -> None:
        self.buffer = buffer
        self.offset = offset  # bytes, a multiple of min-storage-buffer-offset-alignment
        self.size = size

    # equal (in a bind group's key) when the window is: a chunk's BufferRange is made anew for each kernel
    def __eq__(self, other: object) -> bool:
        return type(other) is BufferRange and (self.buffer is other.buffer and self.offset == other.offset
                                               and self.size == other.size)

    def __hash__(self) -> int:
        return hash((id(self.buffer), self.offset, self.size))


class Window(Storage):
    """The storage of a chunk's view: a :class:`BufferRange` of its parent's buffer. It owns nothing (the
    parent returns the buffer to the pool), and it lives only while a kernel is recorded."""

    __slots__ = ("parent",)

    def __init__(self, parent: Storage, offset: int, size: int) -> None:
        self.parent = parent
        self.buf = BufferRange(parent.buf, offset, size)
        self.nbytes = size

    def __del__(self) -> None:
        pass


class _Flags:
    __slots__ = ("c_contiguous",)

    def __init__(self, c: bool) -> None:
        self.c_contiguous = c


_CONTIGUOUS: dict[tuple[int, ...], tuple[int, ...]] = {}  # shape -> its row-major strides (a step meets few shapes)


def size_text(nbytes: int) -> str:
    """A byte count for an error message in the unit that shows it: "512 bytes", "58.6 KiB", "1.1 MiB" (tests and
    small adapters set limits of a few KiB, which in MiB would read as "0.0 MiB")."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    power = min(int(math.log(nbytes, 1024)), 3)
    return f"{nbytes / 1024**power:.1f}".removesuffix(".0") + " " + ("KiB", "MiB", "GiB")[power - 1]


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    key = shape if type(shape) is tuple else tuple(shape)
    got = _CONTIGUOUS.get(key)
    if got is not None:
        return got
    out = []
    s = 1
    for d in reversed(key):
        out.append(s)
        s *= max(d, 1)
    got = tuple(reversed(out))
    if len(_CONTIGUOUS) < 4096:
        _CONTIGUOUS[key] = got
    return got


_IS_CONTIGUOUS: dict[tuple[tuple[int, ...], tuple[int, ...]], bool] = {}  # (shape, strides) -> row-major or not


def is_contiguous(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether ``stride`` lays ``shape`` out row-major (a size-1 axis's stride aside). Kept per (shape, strides): the
    kernels ask it of every operand, and a step meets the same few layouts (transposed weights, attention heads)."""
    want = contiguous_strides(shape)
    if stride == want:
        return True
    key = (shape, stride)
    got = _IS_CONTIGUOUS.get(key)
    if got is None:
        got = all(s == w for s, w, n in zip(stride, want, shape) if n != 1)
        if len(_IS_CONTIGUOUS) >= 4096:
            _IS_CONTIGUOUS.clear()
        _IS_CONTIGUOUS[key] = got
    return got


def view_of(st: Storage | None, shape: tuple[int, ...], dtype: np.dtype[Any], stride: tuple[int, ...],
            offset: int) -> WArray:
    """A :class:`WArray` from a shape and strides that are already tuples of ints (a view's, a plan's): the
    constructor's conversions skipped, one Python frame per view."""
    a = _new_array(WArray)
    a.st = st
    a.shape = shape
    a.ndim = len(shape)
    a.dtype = dtype
    a.stride = stride
    a.offset = offset
    return a


class WArray:
    """A strided view of a GPU buffer: what a WebGPU tensor's ``_data`` is.

    It answers the part of ``numpy.ndarray``'s interface that the op layer reads (``shape``, ``ndim``,
    ``dtype``, ``size``, ``itemsize``, ``strides``, ``flags.c_contiguous``), plus ``copy``, ``astype``,
    basic and advanced ``[]`` get/set, ``max``/``min`` (read back), and ``__array__`` (read back).
    ``dtype`` is the logical NumPy dtype (int64 for an int64 tensor stored as i32).
    """

    # ``ndim`` is a slot, not a property: the op layer and the kernels read it several times per op (a shape is
    # never reassigned, so it cannot go stale)
    __slots__ = ("dtype", "ndim", "offset", "shape", "st", "stride")

    def __init__(self, st: Storage | None, shape: tuple[int, ...], dtype: np.dtype[Any],
                 stride: tuple[int, ...] | None = None, offset: int = 0) -> None:
        self.st = st
        self.shape = shape = tuple(map(int, shape))
        self.ndim = len(shape)
        self.dtype = dtype
        self.stride = contiguous_strides(shape) if stride is None else tuple(stride)
        self.offset = offset

    def held_refs(self) -> int:
        """References to this array the runtime holds only so that an in-place op may still redirect the dispatch
        that made it (``take_held``): 1 while it is the last dispatch's fresh output, else 0. NOTE [gradient
        stealing] in the engine does not count it as a holder."""
        held = RT.held
        return 1 if held is not None and held[4] is not None and held[4][0] is self else 0

    # -- the ndarray-like interface ----------------------------------------------------------------
    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def strides(self) -> tuple[int, ...]:
        return tuple(map(self.dtype.itemsize.__mul__, self.stride))  # (no generator frame: read per op)

    @property
    def contiguous(self) -> bool:
        shape, stride = self.shape, self.stride
        if stride == (_CONTIGUOUS.get(shape) or contiguous_strides(shape)):
            return True
        got = _IS_CONTIGUOUS.get((shape, stride))  # (is_contiguous's cache, read here: one frame less)
        return is_contiguous(shape, stride) if got is None else got

    @property
    def flags(self) -> _Flags:
        return _Flags(self.contiguous)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"WArray(shape={self.shape}, dtype={self.dtype}, stride={self.stride}, offset={self.offset})"

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray[Any, Any]:
        a = to_host(self)
        return a if dtype is None else a.astype(dtype)

    def copy(self) -> WArray:
        from . import kernels

        return kernels.contiguous_copy(self)

    def astype(self, dtype: Any, copy: bool = True) -> WArray:
        from . import kernels

        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return kernels.cast(self, np.dtype(dtype))

    def max(self) -> Any:
        return to_host(self).max()

    def min(self) -> Any:
        return to_host(self).min()

    def __getitem__(self, index: Any) -> WArray:
        from . import kernels

        return kernels.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        from . import kernels

        kernels.setitem(self, index, value)


class Runtime:
    """The process-wide device, pipelines, buffer pool and the open batch."""

    def __init__(self) -> None:
        self.device: Any = None
        self.adapter: Any = None
        self.error: str | None = None
        self.has_f16 = False
        self.pipelines: dict[str, tuple[Any, tuple[bool, ...]]] = {}
        self.layouts: dict[tuple[bool, ...], Any] = {}  # bind group layouts by signature
        self.groups: dict[tuple[Any, ...], Any] = {}  # bind groups by (signature, meta window, buffer ids)
        self.groups_of: dict[int, list[tuple[Any, ...]]] = {}  # buffer id -> the keys of the groups naming it
        # Free buffers by size class, each list a heap of (serial, buffer): its top is the first-made buffer, the
        # one a request gets (see _take_free); heapq keeps it in C, with no Python sort key per comparison.
        self.pool: dict[int, list[tuple[int, Any]]] = {}
        self.dirty: dict[int, list[tuple[int, Any]]] = {}  # freed while named by unsubmitted commands
        # Every buffer created, by id: the runtime owns them, Storage only leases one. Without this a Storage
        # in a garbage cycle could be finalised together with its buffer (wgpu releases the buffer in its
        # __del__), and Storage.__del__ would put the dead buffer back into the pool.
        self.owned: dict[int, Any] = {}
        self.live_bytes = 0
        self.pooled_bytes = 0
        self.peak_bytes = 0
        self.n_alloc = 0
        self.n_reuse = 0
        self.n_dispatch = 0
        self.n_submit = 0
        self.n_upload_bytes = 0  # bytes written from the host (uploads; not the parameter arena)
        self.n_readback = 0  # reads of device memory by the host (each one waits for the device)
        self.encoder: Any = None
        self.cpass: Any = None
        self.batch_refs: list[Any] = []
        self.batch_count = 0
        self.held: tuple[Any, ...] | None = None  # the last dispatch, not yet in the pass (see dispatch)
        self.last_pipe: Any = None  # the pipeline the open pass has set
        # wgpu-native's own entry points for the three commands of a dispatch (see :func:`_pass_calls`), or None
        self.raw: tuple[Any, Any, Any, Any] | None = None
        self.pass_id: Any = None  # the open pass's handle for them
        # wgpu-native's own entry points for the batch's encoder, pass, arena write and submit (:class:`Native`), or
        # None (then ``encoder`` and ``cpass`` are wgpu-py's objects; with it, ``encoder`` is the C handle and
        # ``cpass`` is None)
        self.native: Native | None = None
        self.submit_every = SUBMIT_EVERY
        self.submit_at_step = True  # submit at the start of an optimizer step too (see kernels._StepGroup.add)
        self.arena: Any = None
        # The batch's parameter blocks, staged as int64 words (u32 words or negative int32s, each packed by one
        # ``struct`` call) and narrowed to u32 by NumPy once per submit; ``arena_used`` words are taken.
        self.staging = bytearray(2 * ARENA_BYTES)
        self.arena_used = 0
        self.align = 256
        self.align_words = 64
        # The adapter's limits, checked when a dispatch is recorded (an over-limit dispatch would fail the whole
        # batch at submit time, far from the op that caused it).
        self.max_groups = _LIMIT_DEFAULTS["max_groups"]
        self.max_storage_buffers = _LIMIT_DEFAULTS["max_storage_buffers"]  # per shader stage (the adapter's is requested)
        self.max_binding = _LIMIT_DEFAULTS["max_binding"]
        self.max_buffer = _LIMIT_DEFAULTS["max_buffer"]
        self.max_wg_storage = _LIMIT_DEFAULTS["max_wg_storage"]  # bytes of workgroup memory (the matmul's tiles follow it)
        self.max_invocations = _LIMIT_DEFAULTS["max_invocations"]
        self.pool_limit = POOL_LIMIT
        self.op = "webgpu"  # the primitive whose kernel is running: named by the errors of the runtime
        # Device-side checks (index ranges): a kernel writes the id of the first failed check and the bad value
        # into ``flag``; the host reads it at the next sync (a tensor read, ``synchronize``) and raises the coded
        # error of that check there, as CUDA raises a device-side assert. ``checks``: id -> (code, op, kwargs).
        self.flag: Any = None
        self.checks: dict[int, tuple[str, str, dict[str, Any]]] = {}
        self.n_flag_reads = 0
        # Work held back to be recorded as one dispatch with what follows it (the optimizer's per-parameter updates
        # of a step, see ``kernels.fused_step``): recorded before any other dispatch and at every submit, so the
        # order of the device's work is the program's.
        self.deferred: Callable[[], None] | None = None
        # Graph capture (``graphs.Recorder``, made by ``shapetorch.webgpu.graph``): while set, every dispatch is
        # also handed to it, and nothing recorded is submitted (a capture records work, it does not run it, as
        # torch's). ``withheld``: buffer id -> [graphs naming it, its (buf, size, serial) once freed]: a buffer
        # a captured graph reads or writes never returns to the pool while the graph lives (its private pool).
        self.recorder: Any = None
        self.withheld: dict[int, list[Any]] = {}

    # -- device --------------------------------------------------------------------------------------
    def init(self) -> bool:
        """Request the adapter and device once; False (with ``self.error``) when there is none."""
        if self.device is not None:
            return True
        if self.error is not None:
            return False
        if os.environ.get("SHAPETORCH_WEBGPU_DISABLE") == "1":
            self.error = "disabled by SHAPETORCH_WEBGPU_DISABLE=1"
            return False
        global wgpu
        try:
            import wgpu as _wgpu
        except Exception as e:  # ImportError, or OSError loading the native library
            self.error = f"wgpu is not importable ({type(e).__name__}: {e}); install shapetorch[webgpu]"
            return False
        wgpu = _wgpu
        try:
            adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as e:  # RuntimeError('Request adapter failed ...'); never None
            lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
            self.error = "no WebGPU adapter: " + (lines[-1] if lines else type(e).__name__)
            return False
        if adapter is None:
            self.error = "no WebGPU adapter"
            return False
        feats = [f for f in ("shader-f16",) if f in adapter.features]
        if os.environ.get("SHAPETORCH_WEBGPU_NO_F16") == "1":
            feats = []
        lim = adapter.limits
        want = {k: lim[k] for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                    "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size",
                                    "max-compute-invocations-per-workgroup") if k in lim}
        try:
            self.device = adapter.request_device_sync(required_features=feats, required_limits=want)
        except Exception as e:
            self.error = f"WebGPU device request failed: {str(e).strip().splitlines()[-1]}"
            return False
        self.adapter = adapter
        self.has_f16 = "shader-f16" in feats
        dl = self.device.limits
        self.align = int(dl.get("min-storage-buffer-offset-alignment", 256))
        self.align_words = self.align // 4
        # A limit lowered before the device was made (a test forcing the chunked paths, a user capping a binding)
        # stays lowered, as it does when lowered after: the device's value replaces only the initial one.
        for attr, key in _LIMITS.items():
            preset, got = getattr(self, attr), int(dl.get(key, _LIMIT_DEFAULTS[attr]))
            setattr(self, attr, got if preset == _LIMIT_DEFAULTS[attr] else min(preset, got))
        self.raw = _pass_calls()
        calls = _submit_calls() if self.raw is not None else None
        self.native = Native(calls, self.device) if calls is not None else None
        self.arena = self.device.create_buffer(
            size=ARENA_BYTES, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_DST)
        self.flag = self.device.create_buffer(
            size=16, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST)
        return True

    def require(self) -> None:
        if not self.init():
            fail("device_error_requires", op="webgpu",
                 problem=f"WebGPU is not available: {self.error}. Use device='cpu', or check "
                         "shapetorch.is_webgpu_available() first")

    @property
    def summary(self) -> str:
        return str(self.adapter.summary) if self.adapter is not None else f"unavailable ({self.error})"

    def check_dtype(self, dtype: np.dtype[Any], op: str = "webgpu") -> tuple[str, str, np.dtype[Any]]:
        info = _STORAGE_OF.get(dtype)  # by the dtype itself: ``dtype.name`` is slow, and this runs per dispatch
        if info is None or (dtype == _F16 and not self.has_f16):
            from ..._dtype import DTYPES

            name = "bool" if dtype.kind == "b" else ("bfloat16" if "bfloat16" in str(dtype) else dtype.name)
            shown = f"shapetorch.{name}" if name in DTYPES else str(dtype)
            fail("method_dtype_not_supported_error", op=op, dtype=shown,
                 hint=f" on WebGPU (this adapter supports {', '.join(supported_dtypes(self.has_f16))}; "
                      "move the tensor to 'cpu' for other dtypes)")
        return info

    # -- buffers -------------------------------------------------------------------------------------
    @staticmethod
    def size_class(nbytes: int) -> int:
        n = max(nbytes, 16)
        if n <= 1 << 20:
            return 1 << (n - 1).bit_length()
        return (n + (1 << 20) - 1) & ~((1 << 20) - 1)

    def alloc(self, nbytes: int, upload: bool = False) -> Storage:
        """A buffer of at least ``nbytes``: a free one of its size class or up to twice that, else a new one.

        Buffers freed since the last submit are reused only as dispatch outputs (commands run in order); an
        upload (``write_buffer``) gets a buffer no pending command names. When the device cannot create a
        buffer, the free buffers are released and the creation is tried once more."""
        size = _SIZE_CLASS.get(nbytes)
        if size is None:
            size = self.size_class(nbytes)
            if len(_SIZE_CLASS) < 4096:
                _SIZE_CLASS[nbytes] = size
        if size > self.max_buffer:
            fail("device_error_limit", op=self.op,
                 problem=f"a tensor of {size_text(nbytes)} is more than this WebGPU adapter's largest buffer "
                         f"({size_text(self.max_buffer)}, its max-buffer-size); split the tensor, or compute on "
                         "'cpu'")
        # the common case first: a free buffer of the size class itself -- a warm training step's every output. A
        # dispatch output takes the first made of the pool's and of those freed since the last submit (_take_either)
        bufs = self.pool.get(size)
        if not upload:
            freed = self.dirty.get(size)
            if freed and (not bufs or freed[0][0] < bufs[0][0]):
                bufs = freed
        if bufs:
            serial, buf = heapq.heappop(bufs)
        else:
            # a buffer over the binding limit only serves a request over it: most kernels bind whole buffers
            cap = 2 * size if size > self.max_binding else min(2 * size, self.max_binding)
            found = self._take_free(self.pool, size, cap) if upload else self._take_either(size, cap)
            if found is None:
                buf, serial = self._create(size)
                self.live_bytes += size
                self.peak_bytes = max(self.peak_bytes, self.live_bytes)
                return Storage(buf, size, serial)
            (serial, buf), size = found
        self.pooled_bytes -= size
        self.n_reuse += 1
        self.live_bytes += size
        self.peak_bytes = max(self.peak_bytes, self.live_bytes)
        st = _new_array(Storage)  # (Storage(...) without its constructor's frame: a warm step's every output)
        st.buf, st.nbytes, st.serial = buf, size, serial
        return st

    def _take_either(self, size: int, cap: int) -> tuple[tuple[int, Any], int] | None:
        """A dispatch output's buffer: :meth:`_take_free` over the pool and the buffers freed since the last submit
        together, so that which buffer a request gets does not depend on where the submits fell."""
        pool, dirty = self.pool, self.dirty
        if not dirty:
            return self._take_free(pool, size, cap)
        if not pool.get(size) and not dirty.get(size):
            size = min((k for k, v in (*pool.items(), *dirty.items()) if v and size < k <= cap), default=0)
            if not size:
                return None
        a, b = pool.get(size), dirty.get(size)
        if not a or (b and b[0][0] < a[0][0]):
            a = b
        assert a
        return heapq.heappop(a), size

    @staticmethod
    def _take_free(free: dict[int, list[tuple[int, Any]]], size: int, cap: int) -> tuple[tuple[int, Any], int] | None:
        """The smallest free buffer of ``size`` to ``2 * size`` bytes (so a pool of odd sizes is still reused); of
        those, the first made (the lowest serial number): a loop that frees and requests buffers in the same order
        every step then gets the same buffer at the same place every step, so its bind groups are found again."""
        bufs = free.get(size)
        if not bufs:
            size = min((k for k, v in free.items() if v and size < k <= cap), default=0)
            bufs = free.get(size)
            if not bufs:
                return None
        return heapq.heappop(bufs), size  # the lists are heaps by serial number

    def _too_large(self, nbytes: int) -> NoReturn:
        fail("device_error_limit", op=self.op,
             problem=f"a tensor of {size_text(nbytes)} is more than this WebGPU adapter can bind to a kernel "
                     f"({size_text(self.max_binding)}, its max-storage-buffer-binding-size), and this kernel "
                     "does not run in chunks; compute on 'cpu'")

    def _create(self, size: int) -> tuple[Any, int]:
        """A new buffer and its serial number."""
        usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
        try:
            buf = self._create_buffer(size, usage)
        except Exception:  # out of device memory (wgpu reports it as an error of the call)
            self.trim(0)
            try:
                buf = self._create_buffer(size, usage)
            except Exception as e:
                fail("device_error_out_of_memory", op=self.op, device="webgpu",
                     problem=f"could not allocate {size / 2**20:.1f} MiB with {self.live_bytes / 2**20:.1f} MiB "
                             f"allocated ({_last_line(e)})")
        self.owned[id(buf)] = buf
        serial = self.n_alloc
        self.n_alloc += 1
        return buf, serial

    def _create_buffer(self, size: int, usage: Any) -> Any:
        return self.device.create_buffer(size=size, usage=usage)

    def release(self, buf: Any, size: int, serial: int) -> None:
        withheld = self.withheld
        if withheld and id(buf) in withheld:  # a captured graph's buffer: kept for its replays
            withheld[id(buf)][1] = (buf, size, serial)
            return
        self.live_bytes -= size
        self.pooled_bytes += size
        if self.encoder is None:
            heapq.heappush(self.pool.setdefault(size, []), (serial, buf))
            if self.pooled_bytes > self.pool_limit:
                self.trim(self.pool_limit)
        else:
            heapq.heappush(self.dirty.setdefault(size, []), (serial, buf))

    def trim(self, limit: int) -> None:
        """Destroy free buffers, largest first, until at most ``limit`` bytes are pooled (pending ones stay)."""
        if self.pooled_bytes <= limit or self.recorder is not None:  # (a buffer freed mid-capture may be captured)
            return
        for size in sorted(self.pool, reverse=True):
            bufs = self.pool[size]
            bufs.sort()  # (a sorted list is a heap too)
            while bufs and self.pooled_bytes - self._dirty_bytes() > limit:
                _, b = bufs.pop()  # the last made first: the first made are those a loop reuses
                for key in self.groups_of.pop(id(b), ()):  # the bind groups naming it (its id may come back)
                    self.groups.pop(key, None)
                b.destroy()
                self.owned.pop(id(b), None)
                self.pooled_bytes -= size
        self.pool = {k: v for k, v in self.pool.items() if v}

    def _dirty_bytes(self) -> int:
        return sum(k * len(v) for k, v in self.dirty.items())

    def empty_cache(self) -> None:
        self.flush()
        self.trim(0)

    # -- pipelines and dispatch ----------------------------------------------------------------------
    def pipeline(self, wgsl: str, nbuf: int) -> tuple[Any, tuple[bool, ...]]:
        """The pipeline of ``wgsl`` with ``nbuf`` storage buffers after the parameter block, and its bind group
        layout's signature (read-only or not, per buffer). The layout is explicit rather than "auto" so that the
        parameter block binds with a dynamic offset: a bind group names only the buffers, and one made for a
        signature and a set of buffers serves again (see :meth:`bind_group`)."""
        p = self.pipelines.get(wgsl)
        if p is None:
            access = dict(_BINDING.findall(wgsl))
            sig = tuple(access.get(str(i + 1), "read_write") == "read" for i in range(nbuf))
            sm = self.device.create_shader_module(code=wgsl)
            pl = self.device.create_pipeline_layout(bind_group_layouts=[self.group_layout(sig)])
            pipe = self.device.create_compute_pipeline(layout=pl, compute={"module": sm, "entry_point": "main"})
            p = self.pipelines[wgsl] = (pipe, sig)
        return p

    def group_layout(self, sig: tuple[bool, ...]) -> Any:
        """The bind group layout of a signature: binding 0 the parameter block (read-only, dynamic offset), then
        one storage buffer per entry of ``sig`` (True: read-only)."""
        bgl = self.layouts.get(sig)
        if bgl is None:
            ro, rw = wgpu.BufferBindingType.read_only_storage, wgpu.BufferBindingType.storage
            entries = [{"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE,
                        "buffer": {"type": ro, "has_dynamic_offset": True}}]
            entries += [{"binding": i + 1, "visibility": wgpu.ShaderStage.COMPUTE,
                         "buffer": {"type": ro if r else rw}} for i, r in enumerate(sig)]
            bgl = self.layouts[sig] = self.device.create_bind_group_layout(entries=entries)
        return bgl

    def bind_group(self, sig: tuple[bool, ...], meta_size: int, buffers: Sequence[Any]) -> Any:
        """A bind group of the arena (a ``meta_size`` window, placed by the dispatch's dynamic offset) and
        ``buffers``, made once per (signature, window, buffers): a training step's dispatches name the same pooled
        buffers step after step. The key holds the buffers themselves (hashed by identity; a window by its buffer
        and range, see :class:`BufferRange`), so no key can name a buffer made later at a freed one's address; a
        destroyed buffer's groups are forgotten."""
        key = (sig, meta_size, *buffers)
        bg = self.groups.get(key)
        return bg if bg is not None else self._new_group(key, sig, meta_size, buffers)

    def _new_group(self, key: tuple[Any, ...], sig: tuple[bool, ...], meta_size: int, buffers: Sequence[Any]) -> Any:
        """Make (and keep) the bind group of ``key``. Each binding's size is checked here, once per group: a group
        found again names the same buffers, and a buffer's size never changes."""
        if len(self.groups) >= MAX_GROUPS:
            self.groups.clear()
            self.groups_of.clear()
        bg = self.make_group(self.arena, sig, meta_size, buffers)
        for b in buffers:
            self.groups_of.setdefault(id(b.buffer if type(b) is BufferRange else b), []).append(key)
        self.groups[key] = bg
        return bg

    def make_group(self, arena: Any, sig: tuple[bool, ...], meta_size: int, buffers: Sequence[Any]) -> Any:
        """A new bind group: a ``meta_size`` window of ``arena`` (the batch's, or a captured graph's own) for the
        parameter block, then ``buffers`` (whole, or a :class:`BufferRange`), each checked against the binding
        limit."""
        whole = [(b.buffer, b.offset, b.size) if type(b) is BufferRange else (b, 0, b.size) for b in buffers]
        for _, _, n in whole:
            if n > self.max_binding:
                self._too_large(n)
        entries = [{"binding": 0, "resource": {"buffer": arena, "offset": 0, "size": meta_size}}]
        entries += [{"binding": i + 1, "resource": {"buffer": b, "offset": off, "size": n}}
                    for i, (b, off, n) in enumerate(whole)]
        try:
            return self.device.create_bind_group(layout=self.group_layout(sig), entries=entries)
        except Exception as e:  # nothing is recorded yet: the batch stays intact
            fail("device_error_failed", op=self.op, problem=f"WebGPU rejected a kernel: {_last_line(e)}")

    def dispatch(self, wgsl: str, buffers: Sequence[Any], meta: Sequence[int], grid: tuple[int, int, int],
                 recipe: Any = None) -> None:
        """Record a dispatch. Binding 0 is the parameter block ``meta`` (u32 words); then ``buffers``.

        The dispatch is held until the next one (or the submit) before it reaches the compute pass, so that an
        in-place op can still redirect it (:meth:`take_held`): ``recipe`` is what its kernel needs to record it
        again with another output, whose first item is the output array."""
        if self.deferred is not None:
            self.record_deferred()
        gx, gy, gz = grid
        if gx == 0 or gy == 0 or gz == 0:
            return
        if gx > self.max_groups or gy > self.max_groups or gz > self.max_groups:
            fail("device_error_limit", op=self.op,
                 problem=f"a kernel grid of {grid} workgroups is more than this WebGPU adapter's "
                         f"max-compute-workgroups-per-dimension ({self.max_groups})")
        pipe, sig = self.pipelines.get(wgsl) or self.pipeline(wgsl, len(buffers))
        n = len(meta) or 1
        # the window bound for the parameter block: the words rounded up to 16 (few distinct sizes, so bind groups
        # are shared), never past the arena's end
        size = -(-n // 16) * 64
        off = self.arena_used
        if (off << 2) + size > ARENA_BYTES or self.batch_count >= self.submit_every:
            self.flush()
            off = 0
        key = (sig, size, *buffers)
        bg = self.groups.get(key)
        if bg is None:
            bg = self._new_group(key, sig, size, buffers)
        if self.recorder is not None:
            self.recorder.add(pipe, key, meta, grid)
        # the words are packed as int64 and narrowed once per submit (a NumPy conversion per dispatch, or of a
        # list of Python ints per submit, cost more than the rest of this method); the next block starts at the
        # adapter's offset alignment (the padding words are left as they are: no kernel reads them)
        if meta:
            (_PACKERS.get(n) or _packer(n))(self.staging, off << 3, *meta)
        else:
            (_PACKERS.get(1) or _packer(1))(self.staging, off << 3, 0)
        self.arena_used = off + -(-n // self.align_words) * self.align_words
        if self.encoder is None:
            self._open()
        held = self.held
        if held is not None:
            raw = self.raw
            if raw is None:
                self._emit(held)
            else:  # _emit's C path, inline (one Python frame less per dispatch)
                hpipe = held[0]
                pid = self.pass_id
                try:
                    if hpipe is not self.last_pipe:
                        raw[0](pid, hpipe._internal)
                        self.last_pipe = hpipe
                    offsets = raw[3]
                    offsets[0] = held[2]
                    raw[1](pid, 0, held[1]._internal, 1, offsets)
                    hgrid = held[3]
                    raw[2](pid, hgrid[0], hgrid[1], hgrid[2])
                except (AttributeError, TypeError):
                    if self.cpass is None:
                        self._native_refused()
                    self.raw = None  # (as in _emit: the public methods from now on, the pipeline set again)
                    self.last_pipe = None
                    self._emit(held)
        self.held = (pipe, bg, off << 2, grid, recipe)
        self.batch_refs.append(bg)
        self.batch_refs.extend(buffers)
        self.batch_count += 1
        self.n_dispatch += 1

    def _open(self) -> None:
        """Open the batch: its encoder and compute pass."""
        native = self.native
        if native is not None and self.raw is not None:
            self.encoder, self.pass_id = native.open()
        else:
            self.encoder = self.device.create_command_encoder()
            self.cpass = self.encoder.begin_compute_pass()
            self.pass_id = getattr(self.cpass, "_internal", None) if self.raw is not None else None
            if self.pass_id is None:  # (a wgpu whose pass keeps no handle there: cffi would pass None as NULL)
                self.raw = None
        self.last_pipe = None

    def _native_refused(self) -> NoReturn:
        """A dispatch's C call refused wgpu's handles in a pass of wgpu-native's own (another wgpu's objects): no
        public method can go on with that pass, so the batch is dropped (its results are lost, as a rejected
        batch's) and every later batch takes wgpu-py's methods."""
        self.held = None
        self.flush(drop=True)
        self.raw = self.native = None
        fail("device_error_failed", op=self.op,
             problem="wgpu-native refused this wgpu's handles; the recorded kernels' results are lost (later work "
                     "takes wgpu-py's methods)")

    def _emit(self, held: tuple[Any, ...]) -> None:
        """Put a held dispatch into the compute pass (the pipeline is set only when it changes)."""
        pipe, bg, off, grid, _ = held
        self.held = None
        raw = self.raw
        if raw is not None:
            set_pipeline, set_bind_group, dispatch, offsets = raw
            pid = self.pass_id
            try:
                if pipe is not self.last_pipe:
                    set_pipeline(pid, pipe._internal)
                    self.last_pipe = pipe
                offsets[0] = off  # copied by the call (wgpu records the offsets with the command)
                set_bind_group(pid, 0, bg._internal, 1, offsets)
                dispatch(pid, grid[0], grid[1], grid[2])
                return
            except (AttributeError, TypeError):
                # wgpu's objects no longer hold the handles these calls take (another wgpu version: cffi checks
                # each argument's C type, so nothing was recorded): the public methods from now on. The pipeline
                # is set again, in case only the bind group's call failed.
                if self.cpass is None:
                    self._native_refused()
                self.raw = None
                self.last_pipe = None
        cpass = self.cpass
        if pipe is not self.last_pipe:
            cpass.set_pipeline(pipe)
            self.last_pipe = pipe
        cpass.set_bind_group(0, bg, [off])
        cpass.dispatch_workgroups(*grid)

    def take_held(self, out: Any) -> Any:
        """The recipe of the last dispatch, withdrawn, when it wrote ``out`` (the very array) and no dispatch has
        been recorded since; else None. Its parameter block stays in the arena, unused."""
        held = self.held
        if held is None or held[4] is None or held[4][0] is not out:
            return None
        self.held = None
        self.batch_count -= 1
        self.n_dispatch -= 1
        if self.recorder is not None:
            self.recorder.drop_last()
        return held[4]

    def record_deferred(self) -> None:
        """Record the held-back work now (it calls :meth:`dispatch`)."""
        run, self.deferred = self.deferred, None
        if run is not None:
            run()

    def flush(self, drop: bool = False) -> None:
        """Submit the open batch (``drop``: close it unsubmitted). The batch is closed before anything can raise,
        so a batch the device rejects is dropped with a coded error, and the next op opens a fresh one (the runtime
        never wedges)."""
        if self.deferred is not None and not drop:
            self.record_deferred()
        if self.encoder is None:
            return
        encoder, cpass, held, used = self.encoder, self.cpass, self.held, self.arena_used
        self.encoder = self.cpass = self.held = self.last_pipe = None
        pass_id, self.pass_id = self.pass_id, None
        self.arena_used = 0
        self.batch_refs = []
        self.batch_count = 0
        for size, bufs in self.dirty.items():
            free = self.pool.get(size)
            if free:
                free.extend(bufs)
                heapq.heapify(free)
            else:
                self.pool[size] = bufs
        self.dirty = {}
        native = self.native if cpass is None else None  # (the batch's encoder is wgpu-native's own)
        try:
            if self.recorder is not None or drop:  # a graph capture: the work is recorded by the graph, never run here
                if native is not None:
                    native.close(encoder, pass_id, submit=False)
                else:
                    cpass.end()
                return
            if held is not None:
                self.cpass, self.pass_id = cpass, pass_id
                self._emit(held)
                self.cpass = self.pass_id = None
            words = np.frombuffer(self.staging, dtype=np.int64, count=used).astype(np.uint32) if used else None
            if native is not None:
                error = native.close(encoder, pass_id, (self.arena, words) if words is not None else None)
                if error is not None:
                    raise RuntimeError(error)
            else:
                cpass.end()
                if words is not None:
                    self.device.queue.write_buffer(self.arena, 0, words)
                self.device.queue.submit([encoder.finish()])
        except Exception as e:
            fail("device_error_failed", op=self.op,
                 problem=f"WebGPU rejected the recorded kernels, whose results are lost: {_last_line(e)}")
        finally:
            self.cpass = None
            self.trim(self.pool_limit)
        self.n_submit += 1

    def synchronize(self) -> None:
        """Wait for all submitted work (by reading 4 bytes back; ``on_submitted_work_done`` is avoided), and raise
        the error of a failed device-side check."""
        if self.recorder is not None:
            self.recorder.refuse("st.synchronize() (a wait for the device)")
        self.flush()
        if self.checks:
            self.raise_failed_check()
            return
        st = self.alloc(16)
        self.device.queue.read_buffer(st.buf, 0, 4)

    # -- device-side checks --------------------------------------------------------------------------
    def add_check(self, code: str, op: str, **kwargs: Any) -> int:
        """Register a check that a kernel will make on the device; its id (> 0) goes into the kernel's meta."""
        cid = len(self.checks) + 1
        self.checks[cid] = (code, op, kwargs)
        return cid

    def raise_failed_check(self) -> None:
        """Read the flag (the caller has flushed) and raise the first failed check's error, if any. Called at
        syncs only, and only when checks were recorded since the last read, so no step waits for it."""
        checks, self.checks = self.checks, {}
        raw = self.device.queue.read_buffer(self.flag, 0, 8)
        self.n_flag_reads += 1
        cid, bad = (int(v) for v in np.frombuffer(raw, dtype=np.int32))
        if cid == 0:
            return
        self.device.queue.write_buffer(self.flag, 0, bytes(16))
        code, op, kwargs = checks.get(cid, ("device_error_failed", self.op, {"problem": "a device check failed"}))
        fail(code, op=op, **{k: (bad if v is _BAD else v) for k, v in kwargs.items()})

    # -- transfers -----------------------------------------------------------------------------------
    def upload(self, host: np.ndarray[Any, Any]) -> WArray:
        self.require()
        if self.recorder is not None:
            self.recorder.refuse("a copy from the host (a CPU tensor, a Python list or a host-made table used on "
                                 "the device)")
        _, _, sdt = self.check_dtype(host.dtype)
        logical = host.dtype
        if logical.name == "int64" and host.size:
            lo, hi = int(host.min()), int(host.max())
            if lo < I32_MIN or hi > I32_MAX:
                fail("method_dtype_not_supported_error", op="webgpu", dtype="shapetorch.int64",
                     hint=f" with values outside int32 (found {lo if lo < I32_MIN else hi}): WebGPU stores int64 "
                          "as int32")
        if host.size == 0:
            return WArray(None, host.shape, logical)
        data = np.ascontiguousarray(host.astype(sdt, copy=False)).reshape(-1)
        raw = data.tobytes()
        raw += b"\0" * ((-len(raw)) % 4)
        st = self.alloc(len(raw), upload=True)
        self.device.queue.write_buffer(st.buf, 0, raw)
        self.n_upload_bytes += len(raw)
        return WArray(st, host.shape, logical)

    def empty(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> WArray:
        info = _STORAGE_OF.get(dtype)
        sdt = (info if info is not None and (self.has_f16 or dtype != _F16) else self.check_dtype(dtype))[2]
        shape = tuple(map(int, shape))
        n = math.prod(shape)
        if n == 0:
            return WArray(None, shape, dtype)
        # the array made in place (WArray(...)'s frames skipped: this runs for every kernel's output)
        a = _new_array(WArray)
        a.st = self.alloc(n * sdt.itemsize)
        a.shape, a.ndim, a.dtype, a.offset = shape, len(shape), dtype, 0
        a.stride = _CONTIGUOUS.get(shape) or contiguous_strides(shape)
        return a

    def stats(self) -> dict[str, int]:
        if self.deferred is not None:  # held-back work counts as recorded
            self.record_deferred()
        return {
            "allocated_bytes": self.live_bytes, "reserved_bytes": self.live_bytes + self.pooled_bytes,
            "pooled_bytes": self.pooled_bytes, "peak_allocated_bytes": self.peak_bytes,
            "num_buffers_created": self.n_alloc, "num_buffer_reuses": self.n_reuse,
            "num_dispatches": self.n_dispatch, "num_submits": self.n_submit,
            "num_pipelines": len(self.pipelines), "num_bytes_uploaded": self.n_upload_bytes,
            "num_readbacks": self.n_readback, "num_check_reads": self.n_flag_reads,
        }


RT = Runtime()
_new_array = object.__new__
BAD = _BAD = object()  # in a check's kwargs: replaced by the value the kernel found out of range


_PACK_F32, _UNPACK_U32 = struct.Struct("<f").pack, struct.Struct("<I").unpack


def f32_bits(x: Any) -> int:
    """The bits of ``x`` rounded to float32, as a u32 word (``struct``: a NumPy round trip costs ten times more)."""
    try:
        return int(_UNPACK_U32(_PACK_F32(x))[0])
    except OverflowError:  # past float32's range: NumPy rounds it to an infinity, as a cast would
        return int(np.array(x, dtype=np.float32).view(np.uint32))


_PACKERS: dict[int, Callable[..., None]] = {}


def _packer(n: int) -> Callable[..., None]:
    """``pack_into(buffer, byte_offset, *words)`` for ``n`` int64 words (made once per length)."""
    got = _PACKERS.get(n)
    if got is None:
        got = _PACKERS[n] = struct.Struct(f"<{n}q").pack_into
    return got


def _pass_calls() -> tuple[Any, Any, Any, Any] | None:
    """wgpu-native's C functions for set_pipeline, set_bind_group and dispatch_workgroups, and a reusable C array
    for the dynamic offset; None where this wgpu has no such backend (the public methods are used then).

    wgpu-py's methods wrap each C call in an error capture and build the offsets array per call: 10-20 us of
    host time per dispatch on lavapipe, three times the C calls themselves. Commands recorded into a pass are
    validated when the pass ends (WebGPU: an invalid command invalidates the encoder), so skipping the capture
    loses no error: ``cpass.end()`` and ``encoder.finish()`` go through wgpu-py, and :meth:`Runtime.flush`
    turns what they raise into a coded error."""
    if os.environ.get("SHAPETORCH_WEBGPU_PUBLIC_CALLS") == "1":
        return None
    try:
        from wgpu.backends.wgpu_native._ffi import ffi, lib
    except Exception:  # another backend, or a wgpu whose internals moved
        return None
    try:
        calls = [getattr(lib, n) for n in NATIVE_SIGNATURES]
        # The C declarations must be the ones these calls were written for (wgpu is pinned, but another version
        # may be installed): a changed signature takes the public methods rather than calling with the wrong ABI.
        # The handles passed (``_internal``) are type-checked by cffi at each call; Runtime._emit falls back on that.
        if [ffi.typeof(c).cname for c in calls] != list(NATIVE_SIGNATURES.values()):
            return None
        return calls[0], calls[1], calls[2], ffi.new("uint32_t[1]")
    except Exception:
        return None


# The C functions of the three commands of a dispatch, with the declarations wgpu 0.31's cffi has for them.
NATIVE_SIGNATURES = {
    "wgpuComputePassEncoderSetPipeline":
        "void(*)(struct WGPUComputePassEncoderImpl *, struct WGPUComputePipelineImpl *)",
    "wgpuComputePassEncoderSetBindGroup":
        "void(*)(struct WGPUComputePassEncoderImpl *, uint32_t, struct WGPUBindGroupImpl *, size_t, uint32_t *)",
    "wgpuComputePassEncoderDispatchWorkgroups":
        "void(*)(struct WGPUComputePassEncoderImpl *, uint32_t, uint32_t, uint32_t)",
}


class Native:
    """A batch's life through wgpu-native's C functions (``SUBMIT_SIGNATURES``): the encoder and its compute pass,
    then the pass's end, the arena's write, the finish and the submit, under one error capture. The runtime's
    batches and the graphs' replays open and close their encoders so.

    wgpu-py's methods cost 2-4 times the C call each around it (a descriptor struct, an error capture, a Python
    object with its tracker and ``__del__``): opening a batch through them (``create_command_encoder``,
    ``begin_compute_pass``) took about 100 us of host time on lavapipe, as much as four replayed dispatches. One
    error capture spans the close (wgpu-native validates a pass's commands when it ends and reports an error through
    the device's callback during the call that finds it, which wgpu-py routes to the innermost capture), so what it
    reports still raises the coded error; an encoder that failed is dropped unsubmitted. (What wgpu-native 0.31
    validates only at the submit aborts the process, through wgpu-py's ``submit`` as well: the runtime's record-time
    checks of grids and bindings keep the commands valid.)"""

    def __init__(self, calls: tuple[list[Any], Any, Any], device: Any) -> None:
        funcs, self.ffi, self.errors = calls
        (self.create, self.begin, self.end, self.finish, self.submit, self.write, self.free_pass, self.free_encoder,
         self.free_commands) = funcs
        self.null = self.ffi.NULL
        self.device = device._internal
        self.queue = device.queue._internal
        self.cbuf = self.ffi.new("struct WGPUCommandBufferImpl *[1]")

    def open(self) -> tuple[Any, Any]:
        """A new encoder and its compute pass (handles)."""
        enc = self.create(self.device, self.null)
        return enc, self.begin(enc, self.null)

    def close(self, enc: Any, cpass: Any, write: tuple[Any, Any] | None = None, submit: bool = True) -> str | None:
        """End ``cpass``, write ``write`` ((buffer, array): its bytes at offset 0), finish ``enc`` and submit it
        (``submit=False``: drop it), then release the handles; the last line of the error WebGPU reported (nothing
        is submitted then), or None."""
        errors, null = self.errors, self.null
        cbuf = null
        got = None
        try:
            if not submit:
                self.end(cpass)
                return None
            errors.capture("shapetorch.submit")
            try:
                self.end(cpass)
                if write is not None:
                    buf, words = write
                    self.write(self.queue, buf._internal, 0, self.ffi.from_buffer(words), words.nbytes)
                cbuf = self.finish(enc, null)
            finally:
                got = errors.release("shapetorch.submit")
            if got is None:
                errors.capture("shapetorch.submit")
                try:
                    self.cbuf[0] = cbuf
                    self.submit(self.queue, 1, self.cbuf)
                finally:
                    got = errors.release("shapetorch.submit")
        finally:
            for free, handle in ((self.free_pass, cpass), (self.free_encoder, enc), (self.free_commands, cbuf)):
                if handle != null:
                    free(handle)
        return None if got is None else error_line(got)

    def write_words(self, buf: Any, at: int, ptr: Any, nbytes: int) -> str | None:
        """``nbytes`` from ``ptr`` into ``buf`` at byte ``at``, under an error capture of its own (a rejected write
        submits nothing); the last line of the error WebGPU reported, or None."""
        errors = self.errors
        errors.capture("shapetorch.write")
        try:
            self.write(self.queue, buf._internal, at, ptr, nbytes)
        finally:
            got = errors.release("shapetorch.write")
        return None if got is None else error_line(got)


def error_line(error: tuple[str, str]) -> str:
    """The last line of a captured (type, message) (wgpu-native's cause comes last)."""
    lines = [ln.strip() for ln in str(error[1]).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else str(error[0])


def _submit_calls() -> tuple[list[Any], Any, Any] | None:
    """wgpu-native's C functions of ``SUBMIT_SIGNATURES`` (in that order), cffi's ``ffi`` and wgpu-py's error
    handler; None where this wgpu has no such backend or the declarations differ (the caller calls it only where
    :func:`_pass_calls` found the pass's functions)."""
    try:
        from wgpu.backends.wgpu_native._api import error_handler
        from wgpu.backends.wgpu_native._ffi import ffi, lib

        calls = [getattr(lib, n) for n in SUBMIT_SIGNATURES]
        if [ffi.typeof(c).cname for c in calls] != list(SUBMIT_SIGNATURES.values()):
            return None
        if not (callable(error_handler.capture) and callable(error_handler.release)):
            return None
        return calls, ffi, error_handler
    except Exception:
        return None


# The C functions of a batch besides the dispatches' (``NATIVE_SIGNATURES``), with wgpu 0.31's declarations.
SUBMIT_SIGNATURES = {
    "wgpuDeviceCreateCommandEncoder":
        "struct WGPUCommandEncoderImpl *(*)(struct WGPUDeviceImpl *, WGPUCommandEncoderDescriptor *)",
    "wgpuCommandEncoderBeginComputePass":
        "struct WGPUComputePassEncoderImpl *(*)(struct WGPUCommandEncoderImpl *, WGPUComputePassDescriptor *)",
    "wgpuComputePassEncoderEnd": "void(*)(struct WGPUComputePassEncoderImpl *)",
    "wgpuCommandEncoderFinish":
        "struct WGPUCommandBufferImpl *(*)(struct WGPUCommandEncoderImpl *, WGPUCommandBufferDescriptor *)",
    "wgpuQueueSubmit": "void(*)(struct WGPUQueueImpl *, size_t, struct WGPUCommandBufferImpl * *)",
    "wgpuQueueWriteBuffer": "void(*)(struct WGPUQueueImpl *, struct WGPUBufferImpl *, uint64_t, void *, size_t)",
    "wgpuComputePassEncoderRelease": "void(*)(struct WGPUComputePassEncoderImpl *)",
    "wgpuCommandEncoderRelease": "void(*)(struct WGPUCommandEncoderImpl *)",
    "wgpuCommandBufferRelease": "void(*)(struct WGPUCommandBufferImpl *)",
}


def _last_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return lines[-1] if lines else type(e).__name__


def to_host(a: WArray) -> np.ndarray[Any, Any]:
    """Read an array back (flushes the batch). Non-contiguous views are compacted on the device first."""
    if RT.recorder is not None:
        RT.recorder.refuse("a read of a tensor's values by the host (.item(), .numpy(), .tolist(), printing, "
                           "bool(), or an op whose result's shape depends on the values: nonzero, masked_select)")
    if a.size == 0 or a.st is None:
        return np.zeros(a.shape, dtype=a.dtype)
    if not a.contiguous:
        from . import kernels

        a = kernels.contiguous_copy(a)
    assert a.st is not None
    _, _, sdt = STORAGE[a.dtype.name]
    RT.flush()
    if RT.checks:
        RT.raise_failed_check()
    start = a.offset * sdt.itemsize
    end = start + a.size * sdt.itemsize
    lo = start - start % 4
    hi = end + (-end) % 4
    raw = RT.device.queue.read_buffer(a.st.buf, lo, hi - lo)
    RT.n_readback += 1
    arr = np.frombuffer(raw, dtype=sdt, count=a.size, offset=start - lo)
    out = arr.astype(a.dtype) if sdt != a.dtype else arr.copy()
    return out.reshape(a.shape)

