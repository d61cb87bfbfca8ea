"""``nn.utils.rnn``: padding and packing variable-length sequences, as torch's.

A ``PackedSequence`` holds the time-major concatenation of the sequences' steps, sorted by decreasing
length: ``data[offsets[t] : offsets[t] + batch_sizes[t]]`` is step ``t`` of the ``batch_sizes[t]``
longest sequences. The recurrent layers take and return it; everything here is written in tensor ops,
so gradients flow through packing and unpacking.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, NamedTuple

from ..._errors import fail
from ..._tensor import Tensor
from ...ops.creation import full, tensor
from ...ops.joining import cat, stack
from ...ops.sorting import argsort


class PackedSequence(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self._replace(data=self.data.to(*args, **kwargs))

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    @property
    def is_cuda(self) -> bool:
        return False

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    return argsort(permutation)


def _lengths(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            fail("argument_error_invalid", op="pack_padded_sequence",
                 problem=f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (``(T, B, *)``, or ``(B, T, *)`` with ``batch_first``) of the given lengths."""
    sizes = _lengths(lengths)
    if batch_first:
        input = input.transpose(0, 1)
    if len(sizes) != input.shape[1]:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(sizes)} "
                         f"(batch_size={input.shape[1]})")
    if any(n <= 0 for n in sizes):
        fail("argument_error_invalid", op="pack_padded_sequence",
             problem="Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
    sorted_indices: Tensor | None = None
    if enforce_sorted:
        if any(a < b for a, b in itertools.pairwise(sizes)):
            fail("argument_error_invalid", op="pack_padded_sequence",
                 problem="`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can "
                         "pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this "
                         "requirement if you do not need ONNX exportability.")
    else:
        order = sorted(range(len(sizes)), key=lambda i: -sizes[i])  # stable, as torch's sort of the lengths
        sorted_indices = tensor(order)
        input = input.index_select(1, sorted_indices)
        sizes = [sizes[i] for i in order]
    if sizes[0] > input.shape[0]:
        fail("argument_error_invalid", op="pack_padded_sequence",
             problem=f"Expected sequence length to be larger than or equal to {sizes[0]}, but got {input.shape[0]}")
    batch_sizes = [sum(n > t for n in sizes) for t in range(sizes[0])]
    data = cat([input[t, :b] for t, b in enumerate(batch_sizes)])
    return PackedSequence(data, tensor(batch_sizes), sorted_indices, invert_permutation(sorted_indices))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The padded batch and the lengths (in the original order) of a ``PackedSequence``."""
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    steps = len(batch_sizes)
    if total_length is not None and total_length < steps:
        raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, "
                         f"but got total_length={total_length} and max sequence length being {steps}")
    batch, feature = batch_sizes[0], tuple(data.shape[1:])
    rows, offset = [], 0
    for b in batch_sizes:
        step = data[offset : offset + b]
        offset += b
        rows.append(step if b == batch else cat([step, full((batch - b, *feature), padding_value, dtype=data.dtype)]))
    for _ in range(steps, total_length or steps):
        rows.append(full((batch, *feature), padding_value, dtype=data.dtype))
    padded = stack(rows)
    lengths = [sum(b > i for b in batch_sizes) for i in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in sequence.unsorted_indices.tolist()]
    return (padded.transpose(0, 1) if batch_first else padded), tensor(lengths)


def pad_sequence(sequences: Sequence[Tensor] | Tensor, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of different lengths (dim 0), padded with ``padding_value`` to the longest."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences)
    longest = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            pad = full((missing, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, pad] if padding_side == "right" else [pad, s])
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths(lengths))]


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence",
           "pad_sequence", "unpack_sequence", "unpad_sequence"]
