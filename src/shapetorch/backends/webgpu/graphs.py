"""Graph capture and replay on the WebGPU runtime (what ``shapetorch.webgpu.Graph`` stands on).

A capture installs a :class:`Recorder` as ``RT.recorder``: the ops run through the normal Python path (shapes
checked, errors raised, buffers allocated), every dispatch they record is handed to the recorder (pipeline,
bind-group key, parameter-block words, grid), and nothing recorded is submitted -- a capture records work, it
does not run it, as torch's CUDA graph capture. What cannot be replayed without the host (a read back, an upload)
raises, and ends the capture (:meth:`Recorder.refuse`).

:class:`Captured` is the instantiated graph: the parameter blocks of all its dispatches in one buffer of its own
(written once; the random draws' seed and offset words rewritten before a replay that needs them), a bind group
per distinct key against that buffer, and the native handles of each command. A replay encodes them into one
compute pass through the same wgpu-native entry points the runtime uses, and submits once: no op layer, no
autograd, no launch plans. Every buffer the graph names is withheld from the pool while it lives
(``RT.withheld``), so a replay never writes into a buffer an eager tensor got after the capture.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from ..._errors import fail
from .runtime import RT, BufferRange, Native


class Recorder:
    """The dispatches of one capture, in the order they reach the compute pass."""

    def __init__(self) -> None:
        # (pipeline, bind-group key (sig, window size, *buffers), parameter words, grid, index of the seed word)
        self.entries: list[tuple[Any, tuple[Any, ...], tuple[int, ...], tuple[int, int, int], int]] = []
        self.random_word = -1  # set by a random kernel for its next dispatch: where its (seed, offset) words are
        self.refused: str | None = None
        self.checks: dict[int, Any] = {}  # the device-side checks its kernels registered (RT.add_check)
        self.dispatches_before = 0

    def add(self, pipe: Any, key: tuple[Any, ...], meta: Any, grid: tuple[int, int, int]) -> None:
        self.entries.append((pipe, key, tuple(meta) or (0,), grid, self.random_word))
        self.random_word = -1

    def drop_last(self) -> None:
        """The last dispatch was withdrawn (an in-place op recorded it again into its own output)."""
        self.entries.pop()

    def random(self, word: int) -> None:
        """The next dispatch draws random numbers: its words ``word`` .. ``word + 3`` are the generator's seed and
        offset (low and high halves), rewritten at each replay (``Captured.replay``)."""
        self.random_word = word

    def refuse(self, what: str) -> NoReturn:
        """End the capture (the runtime stays usable, the graph stays empty) and raise the coded error."""
        end_capture()
        self.refused = what
        fail("device_error_graph_capture", op="webgpu.graph",
             problem=f"{what} cannot be captured in a WebGPU graph (a replay runs without the host); do it "
                     "before the capture or after a replay")


def begin_capture() -> Recorder:
    """Start recording: the work recorded before is submitted and waited for first (as torch's capture)."""
    RT.require()
    if RT.recorder is not None:
        fail("device_error_graph_capture", op="webgpu.graph",
             problem="a graph capture is already underway (captures do not nest)")
    RT.synchronize()
    rec = RT.recorder = Recorder()
    rec.dispatches_before = RT.n_dispatch
    return rec


def end_capture() -> Recorder | None:
    """Stop recording; the recorder, or None when no capture was underway. The batch the capture recorded into
    is closed unsubmitted, and the device-side checks its kernels registered leave the runtime with it."""
    rec = RT.recorder
    if rec is None:
        return None
    try:
        # an optimizer step held back to be recorded with what follows belongs to the capture, kept or dropped
        # with it (left held, it would run with the next eager step)
        RT.record_deferred()
        RT.flush()
    finally:
        RT.recorder = None
        RT.deferred = None
        rec.checks, RT.checks = RT.checks, {}  # (empty at the start: begin_capture synchronized)
        RT.n_dispatch = rec.dispatches_before  # nothing recorded ran
    return rec


class Captured:
    """A recorded graph, ready to replay."""

    def __init__(self, rec: Recorder) -> None:
        entries = rec.entries
        self.checks = rec.checks  # the device-side checks of its kernels, by the ids their parameter words carry
        align = RT.align_words
        offsets = []
        used = 0
        for _, _, words, _, _ in entries:
            offsets.append(used)
            used += -(-len(words) // align) * align
        # the last block's window (its words rounded up to 16) must lie inside the buffer
        total = max([o + k[1] // 4 for o, (_, k, _, _, _) in zip(offsets, entries)] + [4])
        staged = np.zeros(total, dtype=np.int64)
        for o, (_, _, words, _, _) in zip(offsets, entries):
            staged[o:o + len(words)] = words
        self.words = staged.astype(np.uint32)  # (u32 bit patterns and negative int32s, as the runtime's arena)
        import wgpu

        self.arena = RT.device.create_buffer(size=4 * total, usage=wgpu.BufferUsage.STORAGE
                                             | wgpu.BufferUsage.COPY_DST)
        RT.device.queue.write_buffer(self.arena, 0, self.words)
        # the random draws: (word position, the seed and the offset drawn at the capture)
        self.random = [(o + w, int(words[w]) | int(words[w + 1]) << 32, int(words[w + 2]) | int(words[w + 3]) << 32)
                       for o, (_, _, words, _, w) in zip(offsets, entries) if w >= 0]
        groups: dict[tuple[Any, ...], Any] = {}
        self.keep: list[Any] = []  # the pipelines and bind groups (their handles are what the commands name)
        self.commands: list[tuple[Any, Any, int, int, int, int]] = []
        last = None
        for o, (pipe, key, _, grid, _) in zip(offsets, entries):
            bg = groups.get(key)
            if bg is None:
                bg = groups[key] = RT.make_group(self.arena, key[0], key[1], key[2:])
                self.keep.append(bg)
            self.keep.append(pipe)
            # the pipeline's handle only where it changes (the runtime's pass sets it so too)
            self.commands.append((pipe if pipe is not last else None, bg, 4 * o, *grid))
            last = pipe
        self.handles = [(None if p is None else p._internal, b._internal, o, x, y, z)
                        for p, b, o, x, y, z in self.commands] if RT.raw is not None else None
        # the replay through the runtime's C calls (encoder, pass, submit), with what they take built once here
        self.native = _Native(self, RT.native) if self.handles is not None and RT.native is not None else None
        # every buffer the commands name, withheld from the pool until release()
        bufs = {}
        for _, key, _, _, _ in entries:
            for b in key[2:]:
                b = b.buffer if type(b) is BufferRange else b
                bufs[id(b)] = b
        self.buffers = bufs
        _withhold(bufs)
        self.inlined_at = -1  # RT.n_submit when a replay last joined the open batch

    def __len__(self) -> int:
        return len(self.commands)

    def replay(self, seed: int, shift: int) -> None:
        """Submit the graph's commands once. Its random draws take the generator's ``seed`` now and the offsets
        they took at the capture moved by ``shift`` (so each replay draws what the eager step would)."""
        if RT.deferred is not None:
            RT.record_deferred()
        # a replay of this graph still in the open batch reads the random words this one would rewrite
        if self.random and self.inlined_at == RT.n_submit and RT.encoder is not None:
            RT.flush()
        if self.random:
            words = self.words
            for at, _, offset in self.random:
                off = offset + shift
                words[at:at + 4] = (seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF, off & 0xFFFFFFFF,
                                    (off >> 32) & 0xFFFFFFFF)
        native = self.native
        if native is not None and RT.encoder is not None and RT.raw is not None and RT.recorder is None:
            # eager work is open: the commands join its compute pass (after it, as a submit of their own would
            # run), so a step that mixes eager ops and replays (``compile``'s) submits once, not twice per replay
            error = native.inline(bool(self.random))
            if error is not None:
                fail("device_error_failed", op="webgpu.graph.replay",
                     problem=f"WebGPU rejected the graph's commands: {error}")
            self.inlined_at = RT.n_submit
            RT.n_dispatch += len(self.commands)
            RT.batch_count += len(self.commands)
            for cid, check in self.checks.items():
                RT.checks.setdefault(cid, check)
            return
        RT.flush()  # the eager work recorded before the replay runs before it
        if native is not None:
            error = native.replay(bool(self.random))
        else:
            error = self._replay_public()
        if error is not None:
            fail("device_error_failed", op="webgpu.graph.replay",
                 problem=f"WebGPU rejected the graph's commands: {error}")
        RT.n_dispatch += len(self.commands)
        RT.n_submit += 1
        for cid, check in self.checks.items():  # (read and raised at the next sync, as an eager kernel's)
            RT.checks.setdefault(cid, check)

    def _replay_public(self) -> str | None:
        """The replay through wgpu-py's methods (a wgpu whose internals differ from those ``_Native`` calls); the
        last line of what WebGPU raised, or None."""
        if self.random:
            RT.device.queue.write_buffer(self.arena, 0, self.words)
        try:
            encoder = RT.device.create_command_encoder()
            cpass = encoder.begin_compute_pass()
            for p, b, o, x, y, z in self.commands:
                if p is not None:
                    cpass.set_pipeline(p)
                cpass.set_bind_group(0, b, [o])
                cpass.dispatch_workgroups(x, y, z)
            cpass.end()
            RT.device.queue.submit([encoder.finish()])
        except Exception as e:
            return str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
        return None

    def release(self) -> None:
        """Give the graph's buffers back to the pool (those whose tensors are gone return to it now)."""
        bufs, self.buffers = self.buffers, {}
        self.commands, self.handles, self.keep, self.native = [], None, [], None
        withheld = RT.withheld
        for i in bufs:
            rec = withheld.get(i)
            if rec is None:
                continue
            rec[0] -= 1
            if rec[0] == 0:
                del withheld[i]
                if rec[1] is not None:
                    RT.release(*rec[1])


def _withhold(bufs: dict[int, Any]) -> None:
    """Keep ``bufs`` out of the pool while a graph names them: those free now leave the free lists (counted as
    allocated, the graph's private pool), the others stay out when their tensors are freed (``RT.release``)."""
    withheld = RT.withheld
    for i in bufs:
        rec = withheld.get(i)
        if rec is None:
            withheld[i] = [1, None]
        else:
            rec[0] += 1
    for size, heap in RT.pool.items():
        keep = []
        for serial, buf in heap:
            rec = withheld.get(id(buf))
            if rec is not None and id(buf) in bufs:
                rec[1] = (buf, size, serial)
                RT.pooled_bytes -= size
                RT.live_bytes += size
            else:
                keep.append((serial, buf))
        if len(keep) != len(heap):
            keep.sort()
            heap[:] = keep
    RT.peak_bytes = max(RT.peak_bytes, RT.live_bytes)


class _Native:
    """A graph's replay through wgpu-native's C functions: the dispatches' (the runtime's own entry points,
    ``RT.raw``) and the encoder's, pass's and submit's (``RT.native``, :class:`runtime.Native`, whose docstring says
    what they save), and the parameter words a replay rewrites. WebGPU has no reusable compute command buffer (a
    buffer is consumed by its submit; bundles are render-only, wgpu-native adds none), so each replay encodes its
    commands again; what stays the same between replays (handles, offsets arrays) is built here once."""

    def __init__(self, graph: Captured, native: Native) -> None:
        self.nat = native
        ffi = native.ffi
        self.arena = graph.arena
        assert RT.raw is not None
        set_pipeline, set_group, dispatch, _ = RT.raw
        self.set_pipeline, self.set_group, self.dispatch = set_pipeline, set_group, dispatch
        assert graph.handles is not None
        # each command's dynamic offset in a C array of its own (read by the call, never written)
        self.commands = [(p, b, ffi.new("uint32_t[1]", [o]), x, y, z) for p, b, o, x, y, z in graph.handles]
        # the span of parameter words a replay rewrites (the random draws' seeds and offsets), as a pointer into the
        # graph's words and a byte range of the arena
        self.words = graph.words
        ats = [at for at, _, _ in graph.random]
        lo, hi = (min(ats), max(ats) + 4) if ats else (0, 0)
        self.span = (4 * lo, ffi.cast("char *", ffi.from_buffer(self.words)) + 4 * lo, 4 * (hi - lo))

    def inline(self, rewrite: bool) -> str | None:
        """Put the commands into the runtime's open compute pass (after its held dispatch); the error WebGPU
        reported for the rewritten words, or None."""
        if rewrite and (got := self._rewrite()) is not None:
            return got
        if RT.held is not None:
            RT._emit(RT.held)
        self._encode(RT.pass_id)
        RT.last_pipe = None  # (the pass's pipeline is the graph's now)
        return None

    def _rewrite(self) -> str | None:
        """Write the span of rewritten parameter words into the arena (a rejected write submits nothing); the
        error WebGPU reported, or None."""
        at, ptr, nbytes = self.span
        return self.nat.write_words(self.arena, at, ptr, nbytes)

    def _encode(self, cpass: Any) -> None:
        """The recorded commands into the compute pass ``cpass``."""
        set_pipeline, set_group, dispatch = self.set_pipeline, self.set_group, self.dispatch
        for p, b, offs, x, y, z in self.commands:
            if p is not None:
                set_pipeline(cpass, p)
            set_group(cpass, 0, b, 1, offs)
            dispatch(cpass, x, y, z)

    def replay(self, rewrite: bool) -> str | None:
        """Encode and submit the commands once; the error WebGPU reported, or None."""
        if rewrite and (got := self._rewrite()) is not None:
            return got
        enc, cpass = self.nat.open()
        try:
            self._encode(cpass)
        except BaseException:
            self.nat.close(enc, cpass, submit=False)
            raise
        return self.nat.close(enc, cpass)
