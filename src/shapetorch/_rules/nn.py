"""Shape rules of the neural-network ops: convolution, transposed convolution, pooling, attention,
normalisation and losses. Standard library only; gradual like every rule (unknowns never raise)."""

from __future__ import annotations

import math

from .axes import wrap_dim
from .broadcast import broadcast_pair
from .dims import UNKNOWN, Dim, Shape, differ, fmt_shape
from .errors import RuleError
from .inplace import inplace_shape

_KNOWN = int


def _ints(*dims: Dim) -> bool:
    return all(isinstance(d, _KNOWN) for d in dims)


def _spatial_rank(op: str, input: Shape, nd: int) -> int:
    """Batched (N, C, *S) or unbatched (C, *S): returns how many leading dims precede the spatial ones."""
    if len(input) not in (nd + 1, nd + 2):
        raise RuleError("conv_error_input_rank", op=op, unbatched=nd + 1, batched=nd + 2, shape=input)
    return len(input) - nd


def _window(op: str, input: Shape, lead: int, kernel: tuple[int, ...], stride: tuple[int, ...],
            padding: tuple[int, ...], dilation: tuple[int, ...], ceil_mode: bool = False) -> tuple[Dim, ...]:
    out: list[Dim] = []
    for i, (k, s, p, d) in enumerate(zip(kernel, stride, padding, dilation)):
        size = input[lead + i]
        if not isinstance(size, _KNOWN):
            out.append(UNKNOWN)
            continue
        num = size + 2 * p - (d * (k - 1) + 1)
        n = (-(-num // s) if ceil_mode else num // s) + 1
        if ceil_mode and (n - 1) * s >= size + p:
            n -= 1
        if n < 1:  # as torch: ceil_mode lets a last window hang over the end
            raise RuleError("conv_error_kernel_too_large", op=op, shape=input, padded=tuple(
                input[lead + j] + 2 * padding[j] if isinstance(input[lead + j], int) else UNKNOWN  # type: ignore[operator]
                for j in range(len(kernel))), kernel=kernel)
        out.append(n)
    return tuple(out)


def _positive(op: str, name: str, values: tuple[int, ...], minimum: int = 1) -> None:
    if any(v < minimum for v in values):
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"{name} must be >= {minimum}, got {values}")


def conv_shape(input: Shape, weight: Shape, stride: tuple[int, ...], padding: tuple[int, ...],
               dilation: tuple[int, ...], groups: int = 1, op: str = "conv2d") -> Shape:
    """``conv{n}d``: input (N, C_in, *S) or (C_in, *S), weight (C_out, C_in / groups, *K)."""
    nd = len(weight) - 2
    lead = _spatial_rank(op, input, nd)
    _positive(op, "stride", stride)
    _positive(op, "dilation", dilation)
    _positive(op, "padding", padding, 0)
    _positive(op, "groups", (groups,))
    c_in, c_out = input[lead - 1], weight[0]
    _weight_rows(op, weight, groups)
    if isinstance(c_out, int) and c_out % groups:
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"out_channels divisible by groups ({c_out} % {groups} != 0)", got=c_in)
    if _ints(c_in, weight[1]) and c_in != weight[1] * groups:  # type: ignore[operator]
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"{weight[1] * groups} channels", got=c_in)  # type: ignore[operator]
    kernel = tuple(k if isinstance(k, int) else 1 for k in weight[2:])
    spatial = _window(op, input, lead, kernel, stride, padding, dilation)
    _empty_input(op, input, lead, nd)
    # torch's empty-input convolution: zero input channels give zero output channels, whatever the weight's
    return input[: lead - 1] + (0 if c_in == 0 else c_out,) + spatial


def _weight_rows(op: str, weight: Shape, groups: int) -> None:
    """torch's first weight check: at least ``groups`` rows (out_channels; a transposed conv's in_channels)."""
    if isinstance(weight[0], int) and weight[0] < groups:
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"Given groups={groups}, expected weight to be "
                        f"at least {groups} at dimension 0, but got weight of size {list(weight)} instead")


def _empty_input(op: str, input: Shape, lead: int, nd: int) -> None:
    """An empty input is convolved only when its batch or its channels are empty (torch's empty backend); an empty
    spatial dim is refused, the shape named as torch's kernels see it (a batch added, 1-D as 2-D)."""
    batched = (1,) * (2 - lead) + tuple(input)
    if 0 in input[lead:] and _ints(*batched) and batched[0] != 0 and batched[1] != 0:
        seen = list(batched[:2]) + ([1] if nd == 1 else []) + list(batched[2:])
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"Only zero batch or zero channel inputs are "
                        f"supported, but got input shape: {seen}")


def conv_transpose_shape(input: Shape, weight: Shape, stride: tuple[int, ...], padding: tuple[int, ...],
                         output_padding: tuple[int, ...], dilation: tuple[int, ...], groups: int = 1,
                         op: str = "conv_transpose2d") -> Shape:
    """``conv_transpose{n}d``: weight (C_in, C_out / groups, *K); out = (L-1)s - 2p + d(k-1) + op + 1."""
    nd = len(weight) - 2
    lead = _spatial_rank(op, input, nd)
    _positive(op, "stride", stride)
    _positive(op, "dilation", dilation)
    _positive(op, "padding", padding, 0)
    _weight_rows(op, weight, groups)  # (torch's check, before the channels')
    c_in = input[lead - 1]
    if differ(c_in, weight[0]):
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"{weight[0]} channels", got=c_in)
    for o, s, d in zip(output_padding, stride, dilation):
        if o >= s and o >= d:
            raise RuleError("conv_error_invalid_argument", op=op,
                            problem=f"output padding must be smaller than either stride or dilation, got {output_padding}")
    _empty_input(op, input, lead, nd)
    if weight[1] == 0:  # torch's transposed kernels refuse an empty weight (its oneDNN one with its own words)
        what = "2D or 4D weight" if nd < 3 else ("5D (n_output_plane x n_input_plane x kernel_depth x kernel_height "
                                                 "x kernel_width) tensor expected for weight")
        shown = list(weight[:2]) + [1] + list(weight[2:]) if nd == 1 else list(weight)
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"non-empty {what}" + (
            f" tensor expected, but got: {shown}" if nd < 3 else f", but got: {shown}"))
    out: list[Dim] = []
    for i in range(nd):
        size, k = input[lead + i], weight[2 + i]
        if not _ints(size, k):
            out.append(UNKNOWN)
            continue
        n = (size - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) + output_padding[i] + 1  # type: ignore[operator]
        if n <= 0:
            raise RuleError("conv_error_kernel_too_large", op=op, shape=input, padded=(n,), kernel=tuple(weight[2:]))
        out.append(n)
    c_out = weight[1] * groups if isinstance(weight[1], int) else UNKNOWN
    return input[: lead - 1] + (c_out,) + tuple(out)


def pool_shape(input: Shape, kernel: tuple[int, ...], stride: tuple[int, ...], padding: tuple[int, ...],
               dilation: tuple[int, ...], ceil_mode: bool = False, op: str = "max_pool2d") -> Shape:
    """``max_pool{n}d`` / ``avg_pool{n}d``: (N, C, *S) or (C, *S); padding at most half the kernel."""
    nd = len(kernel)
    if len(input) not in (nd + 1, nd + 2):
        raise RuleError("conv_error_input_rank", op=op, unbatched=nd + 1, batched=nd + 2, shape=input)
    lead = len(input) - nd
    if any(s == 0 for s in input[len(input) - nd - 1:]):  # torch: "with optional 0 dim batch size"
        raise RuleError("pool_error_empty_input", op=op, unbatched=nd + 1, batched=nd + 2, shape=input)
    _positive(op, "kernel_size", kernel)
    _positive(op, "stride", stride)
    _positive(op, "dilation", dilation)
    for k, p in zip(kernel, padding):
        if p < 0 or p > k // 2:  # torch compares with the kernel size, not the dilated one
            raise RuleError("pool_error_invalid_padding", op=op, padding=padding, kernel=kernel)
    return input[:lead] + _window(op, input, lead, kernel, stride, padding, dilation, ceil_mode)


def adaptive_pool_shape(input: Shape, output_size: tuple[int | None, ...], op: str = "adaptive_avg_pool2d",
                        nonempty: bool = False) -> Shape:
    """``nonempty`` (the max pools): no pooled dim may be empty, there being no maximum of nothing."""
    nd = len(output_size)
    if len(input) <= nd:  # (torch's Python fills a sequence's Nones from the input's dims first: a ValueError)
        raise RuleError("pool_error_input_rank_too_low", op=op, need=nd + 1, shape=input)
    if len(input) not in (nd + 1, nd + 2):
        raise RuleError("conv_error_input_rank", op=op, unbatched=nd + 1, batched=nd + 2, shape=input)
    lead = len(input) - nd
    if nonempty and any(s == 0 for s in input[lead:]):
        raise RuleError("reduction_error_empty_input", op=op, shape=input)
    return input[:lead] + tuple(input[lead + i] if o is None else o for i, o in enumerate(output_size))


def attention_shape(query: Shape, key: Shape, value: Shape, mask: Shape | None = None,
                    op: str = "scaled_dot_product_attention") -> Shape:
    """query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); the mask broadcasts to the shape of
    the scores, (..., L, S) with the batch dims of query and key, without widening it."""
    for name, s in (("query", query), ("key", key), ("value", value)):
        if len(s) < 2:
            raise RuleError("attention_error_shape_mismatch", op=op, q=query, k=key, v=value,
                            problem=f"{name} needs at least 2 dimensions")
    if differ(query[-1], key[-1]):
        raise RuleError("attention_error_shape_mismatch", op=op, q=query, k=key, v=value,
                        problem=f"query and key embedding sizes differ ({query[-1]} != {key[-1]})")
    if differ(key[-2], value[-2]):
        raise RuleError("attention_error_shape_mismatch", op=op, q=query, k=key, v=value,
                        problem=f"key and value sequence lengths differ ({key[-2]} != {value[-2]})")
    scores = broadcast_pair(query[:-2], key[:-2], op) + (query[-2], key[-2])
    if mask is not None:
        # torch adds the mask into the scores in place: it may broadcast to their shape, never widen it
        inplace_shape(scores, broadcast_pair(mask, scores, op), op)
    return broadcast_pair(scores[:-2], value[:-2], op) + (query[-2], value[-1])


def normalized_shape_check(input: Shape, normalized: Shape, op: str = "layer_norm") -> None:
    """layer_norm: the trailing dims of the input must equal ``normalized_shape``."""
    n = len(normalized)
    if len(input) < n or any(differ(a, b) for a, b in zip(input[len(input) - n:], normalized)):
        raise RuleError("layer_norm_error_shape_mismatch", op=op, shape=input, normalized=normalized)


# The input ranks each BatchNorm layer takes: (C) features with a batch or without ((N, C) or (N, C, L)), or
# images ((N, C, H, W)). One table for the layers and the plugin.
NORM_LAYER_RANKS: dict[str, tuple[int, ...]] = {
    "BatchNorm1d": (2, 3), "BatchNorm2d": (4,), "BatchNorm3d": (5,),
    "InstanceNorm1d": (2, 3), "InstanceNorm2d": (3, 4), "InstanceNorm3d": (4, 5),  # the lower rank is unbatched
}


def batch_norm_rank_check(input: Shape, op: str) -> None:
    """A BatchNorm or InstanceNorm layer's input rank, with torch's words: ``expected 4D input (got 3D input)``."""
    ranks = NORM_LAYER_RANKS[op]
    if len(input) not in ranks:
        expected = " or ".join(f"{r}D" for r in ranks)
        raise RuleError("norm_error_input_rank", op=op, expected=expected, got=len(input))


def channels_check(input: Shape, channels: Dim, op: str = "batch_norm", dim: int = 1) -> None:
    """batch_norm / instance_norm: input (N, C, ...) with C == num_features."""
    if len(input) <= dim or differ(input[dim], channels):
        raise RuleError("norm_error_channels_mismatch", op=op, shape=input, expected=channels, dim=dim)


def class_target_shape(input: Shape, target: Shape, op: str = "cross_entropy") -> Shape:
    """Class-index targets: input (N, C, *d) or (C,), target (N, *d) or (); returns the loss shape."""
    expected = input[:1] + input[2:] if len(input) >= 2 else ()
    if len(target) != len(expected) or any(differ(a, b) for a, b in zip(target, expected)):
        raise RuleError("loss_error_target_shape_mismatch", op=op, input=input, target=target, expected=expected)
    return expected


def _sliding_args(op: str, **args: tuple[int, ...]) -> None:
    """im2col/col2im arguments: two ints each; kernel, stride, dilation (and fold's output size) positive,
    padding non-negative. Messages as torch's."""
    for name, v in args.items():
        if len(v) != 2:
            raise RuleError("conv_error_invalid_argument", op=op,
                            problem=f"It is expected {name} equals to 2, but got size {len(v)}")
    for name, label, minimum in (("output_size", "output size", 1), ("kernel_size", "kernel size", 1),
                                 ("stride", "stride", 1), ("dilation", "dilation", 1), ("padding", "padding", 0)):
        got = args.get(name)
        if got is not None and any(x < minimum for x in got):
            short = {"output size": "output", "kernel size": "kernel", "padding": "pad"}.get(label, label)
            want = "non-negative" if minimum == 0 else "greater than zero"
            raise RuleError("conv_error_invalid_argument", op=op, problem=f"{label} should be {want}, but got "
                            f"{short}_height: {got[0]} {short}_width: {got[1]}")


def _blocks(size: tuple[Dim, ...], kernel: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
            stride: tuple[int, ...]) -> tuple[Dim, ...]:
    return tuple((s + 2 * p - (d * (k - 1) + 1)) // st + 1 if isinstance(s, _KNOWN) else UNKNOWN
                 for s, k, d, p, st in zip(size, kernel, dilation, padding, stride))


def unfold_shape(input: Shape, kernel_size: tuple[int, ...], dilation: tuple[int, ...], padding: tuple[int, ...],
                 stride: tuple[int, ...], op: str = "unfold") -> Shape:
    """``F.unfold`` (im2col): (N, C, H, W) or (C, H, W) to (N, C * kh * kw, L), L the number of blocks."""
    if len(input) < 3:  # torch reads dim 2 (dim 1 of a 0-d tensor) before anything else
        n = max(len(input), 1)
        raise RuleError("dimension_error_out_of_range", op=op, lo=-n, hi=n - 1, dim=max(len(input), 1))
    _sliding_args(op, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    if len(input) > 4 or any(d == 0 for d in input[-3:]):
        raise RuleError("conv_error_invalid_argument", op=op, problem="Expected 3D or 4D (batch mode) tensor with "
                        "possibly 0 batch size and other non-zero dimensions for input, but got: "
                        f"[{', '.join(str(d) for d in input)}]")
    blocks = _blocks(input[-2:], kernel_size, dilation, padding, stride)
    if any(isinstance(b, _KNOWN) and b < 1 for b in blocks):
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"Given input with spatial size "
                        f"({input[-2]}, {input[-1]}), kernel_size={kernel_size}, dilation={dilation}, padding="
                        f"{padding}, calculated shape of the array of sliding blocks as ({blocks[0]}, {blocks[1]}), "
                        "but its components must be at least one.")
    c = input[-3]
    k = kernel_size[0] * kernel_size[1]
    length = blocks[0] * blocks[1] if _ints(*blocks) else UNKNOWN  # type: ignore[operator]
    return (*input[:-3], c * k if isinstance(c, _KNOWN) else UNKNOWN, length)


def fold_shape(input: Shape, output_size: tuple[int, ...], kernel_size: tuple[int, ...], dilation: tuple[int, ...],
               padding: tuple[int, ...], stride: tuple[int, ...], op: str = "fold") -> Shape:
    """``F.fold`` (col2im): (N, C * kh * kw, L) or (C * kh * kw, L) to (N, C, *output_size), the blocks summed."""
    _sliding_args(op, output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding,
                  stride=stride)
    if len(input) not in (2, 3) or any(d == 0 for d in input[-2:]):
        raise RuleError("conv_error_invalid_argument", op=op, problem="Expected 2D or 3D (batch mode) tensor for "
                        "input with possibly 0 batch size and non-zero dimensions for input, but got: "
                        f"[{', '.join(str(d) for d in input)}]")
    ck, length = input[-2], input[-1]
    k = kernel_size[0] * kernel_size[1]
    if isinstance(ck, _KNOWN) and ck % k:
        raise RuleError("conv_error_invalid_argument", op=op, problem="Expected size of input's dimension 1 to be "
                        f"divisible by the product of kernel_size, but got input.size(1)={ck} and "
                        f"kernel_size={kernel_size}.")
    bh, bw = _blocks(output_size, kernel_size, dilation, padding, stride)
    if isinstance(length, _KNOWN) and length != bh * bw:  # type: ignore[operator]
        raise RuleError("conv_error_invalid_argument", op=op, problem=f"Given output_size={output_size}, "
                        f"kernel_size={kernel_size}, dilation={dilation}, padding={padding}, stride={stride}, "
                        "expected size of input's dimension 2 to match the calculated number of sliding blocks "
                        f"{bh} * {bw} = {bh * bw}, but got input.size(2)={length}.")  # type: ignore[operator]
    return (*input[:-2], ck // k if isinstance(ck, _KNOWN) else UNKNOWN, *output_size)


def glu_shape(input: Shape, dim: int = -1, op: str = "glu") -> Shape:
    """glu: the input split in two halves along ``dim`` (one gates the other), so that dim is halved and must
    be even; a 0-D input has no dim to halve. torch's messages."""
    if not input:
        raise RuleError("glu_error_halving_dimension", op=op,
                        problem="glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, len(input), op)
    n = input[d]
    if not isinstance(n, _KNOWN):
        return (*input[:d], UNKNOWN, *input[d + 1 :])
    if n % 2:
        raise RuleError("glu_error_halving_dimension", op=op,
                        problem=f"Halving dimension must be even, but dimension {d} is size {n}")
    return (*input[:d], n // 2, *input[d + 1 :])


def one_hot_shape(input: Shape, num_classes: Dim, op: str = "one_hot") -> Shape:
    """one_hot: the input's shape and a last dim of ``num_classes`` (-1: the largest class + 1, known from the
    values only)."""
    return (*input, UNKNOWN if num_classes == -1 else num_classes)


# -- recurrent layers ------------------------------------------------------------------------------------------


def _state_check(op: str, name: str, state: Shape | None, want: Shape) -> None:
    if state is None:
        return
    if len(state) != len(want) or any(differ(a, b) for a, b in zip(state, want)):
        got = "[" + ", ".join(repr(d) for d in state) + "]"
        raise RuleError("rnn_error_hidden_shape", op=op, problem=f"Expected {name} size {fmt_shape(want)}, got {got}")


def rnn_shape(input: Shape, input_size: Dim, hidden_size: Dim, num_layers: int = 1, bidirectional: bool = False,
              batch_first: bool = False, proj_size: int = 0, hx: Shape | None = None, cx: Shape | None = None,
              op: str = "LSTM") -> tuple[Shape, Shape, Shape]:
    """RNN/LSTM/GRU: the shapes of ``output``, ``h_n`` and (for an LSTM) ``c_n``.

    Input (L, N, H_in), (N, L, H_in) with ``batch_first``, or unbatched (L, H_in). With D = 2 if
    bidirectional: output (L, N, D * H_out) (batch first: (N, L, D * H_out)), h_n (D * num_layers, N, H_out),
    c_n (D * num_layers, N, H_cell), where H_out is ``proj_size`` or ``hidden_size``; unbatched drops N.
    ``hx`` and ``cx`` are the initial states' shapes, checked against h_n and c_n as torch does."""
    if len(input) not in (2, 3):
        raise RuleError("rnn_error_input_rank", op=op, expected="2D or 3D", rank=len(input))
    if differ(input[-1], input_size):
        raise RuleError("rnn_error_input_size", op=op, expected=input_size, got=input[-1])
    directions = 2 if bidirectional else 1
    h_out: Dim = proj_size if proj_size else hidden_size
    out_feat: Dim = directions * h_out if isinstance(h_out, int) else UNKNOWN
    layers = directions * num_layers
    if len(input) == 2:
        output: Shape = (input[0], out_feat)
        h_n: Shape = (layers, h_out)
        c_n: Shape = (layers, hidden_size)
        if (hx is not None and len(hx) != 2) or (cx is not None and len(cx) != 2):
            states = ", ".join(f"{len(s)}-D" for s in (hx, cx) if s is not None)
            what = "hx and cx" if cx is not None else "hx"
            raise RuleError("rnn_error_hidden_shape", op=op,
                            problem=f"For unbatched 2-D input, {what} should also be 2-D but got ({states}) tensors")
    else:
        steps, batch = (input[1], input[0]) if batch_first else (input[0], input[1])
        output = (batch, steps, out_feat) if batch_first else (steps, batch, out_feat)
        h_n, c_n = (layers, batch, h_out), (layers, batch, hidden_size)
        if (hx is not None and len(hx) != 3) or (cx is not None and len(cx) != 3):
            states = ", ".join(f"{len(s)}-D" for s in (hx, cx) if s is not None)
            raise RuleError("rnn_error_hidden_shape", op=op,
                            problem=f"For batched 3-D input, hx should also be 3-D but got ({states}) tensors")
    lstm = cx is not None
    _state_check(op, "hidden[0]" if lstm else "hidden", hx, h_n)
    _state_check(op, "hidden[1]", cx, c_n)
    steps = input[0] if len(input) == 2 or not batch_first else input[1]
    if steps == 0:  # an empty batch runs; no time steps is refused (after the argument checks, as torch's kernel)
        raise RuleError("rnn_error_empty_sequence", op=op)
    return output, h_n, c_n


def rnn_cell_shape(input: Shape, input_size: Dim, hidden_size: Dim, hx: Shape | None = None,
                   cx: Shape | None = None, op: str = "LSTMCell") -> Shape:
    """RNNCell/LSTMCell/GRUCell: input (N, H_in) or (H_in,) -> the new state, (N, H) or (H,); ``hx``/``cx``
    are the given states' shapes (an LSTMCell's h and c), each of that same shape."""
    if len(input) not in (1, 2):
        raise RuleError("rnn_error_input_rank", op=op, expected="1D or 2D", rank=len(input))
    if differ(input[-1], input_size):
        raise RuleError("rnn_cell_error_input_size", op=op, expected=input_size, got=input[-1])
    out: Shape = (input[0], hidden_size) if len(input) == 2 else (hidden_size,)
    for k, state in enumerate((hx, cx)):
        if state is None:
            continue
        if len(state) != len(out):
            raise RuleError("rnn_error_hidden_shape", op=op, problem=(
                f"hidden{k} of shape {fmt_shape(state)} has {len(state)} dims, expected {len(out)} for input of shape "
                f"{fmt_shape(input)}"))
        if len(out) == 2 and differ(state[0], out[0]):
            raise RuleError("rnn_error_hidden_shape", op=op,
                            problem=f"Input batch size {out[0]} doesn't match hidden{k} batch size {state[0]}")
        if differ(state[-1], hidden_size):
            raise RuleError("rnn_error_hidden_shape", op=op,
                            problem=f"hidden{k} has inconsistent hidden_size: got {state[-1]}, expected {hidden_size}")
    return out


# -- layers that move or pad elements --------------------------------------------------------------------------


def pad_layer_shape(input: Shape, pad: tuple[int, ...], mode: str, dims: int, op: str) -> Shape:
    """The padding layers: ``pad_shape``, after CircularPadNd's own check of the rank (torch's ValueError)."""
    if mode == "circular" and len(input) not in (dims + 1, dims + 2):
        raise RuleError("pad_error_circular_rank", op=op, expected=f"{dims + 1}D or {dims + 2}D", rank=len(input))
    return pad_shape(input, pad, mode, op)


def pad_shape(input: Shape, pad: tuple[int, ...], mode: str = "constant", op: str = "pad") -> Shape:
    """``F.pad`` and the padding layers: ``pad`` holds (before, after) pairs from the last dim backwards.

    Constant padding takes any rank; reflect/replicate/circular pad n dims of an (n+1)-D or (n+2)-D input, by
    less than the size (reflect) or at most the size (circular). A negative pad crops; the result may be empty
    (constant, circular) or not (reflect, replicate), as torch."""
    rank = len(input)
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad,
                        problem="padding length must be even and at most twice the rank")
    n = len(pad) // 2
    if mode != "constant" and rank not in (n + 1, n + 2):
        raise RuleError("pad_error_input_rank", op=op, mode=mode, n=n, lo=n + 1, hi=n + 2, shape=input)
    out = list(input)
    for i in range(n):
        d = rank - 1 - i
        lo, hi, size = pad[2 * i], pad[2 * i + 1], input[d]
        if not isinstance(size, int):
            out[d] = UNKNOWN
            continue
        if mode == "reflect" and (lo >= size or hi >= size):
            raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad, problem=(
                f"padding size should be less than the corresponding input dimension, but got padding ({lo}, {hi}) "
                f"at dimension {d}"))
        if mode == "circular" and (lo > size or hi > size):
            raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad,
                            problem="padding value causes wrapping around more than once")
        kept = size + min(lo, 0) + min(hi, 0)  # what the negative pads leave of the dim
        if (mode in ("constant", "circular") and kept < 0) or (mode == "circular" and kept == 0 < size + lo + hi):
            raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad, problem=(
                f"the negative pads ({lo}, {hi}) crop more than dimension {d} holds (size {size})"))
        if size + lo + hi < 0:  # a negative pad crops
            raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad, problem=(
                f"the padded size of dimension {d} would be {size + lo + hi} (size {size}, pad ({lo}, {hi}))"))
        out[d] = size + lo + hi
    padded = out[rank - n:]
    if mode in ("reflect", "replicate") and n and all(isinstance(s, int) and s < 1 for s in padded):
        raise RuleError("pad_error_invalid_padding", op=op, shape=input, pad=pad, problem=(
            f"input is too small: every padded dimension would be empty {tuple(padded)}"))
    return tuple(out)


def pixel_shuffle_shape(input: Shape, factor: int, op: str = "pixel_shuffle") -> Shape:
    """``pixel_shuffle``: (*, C r^2, H, W) -> (*, C, H r, W r); ``pixel_unshuffle`` the inverse."""
    if len(input) < 3:
        raise RuleError("pixel_shuffle_error_shape", op=op, shape=input,
                        problem=f"expects input to have at least 3 dimensions, but got input with {len(input)} dimension(s)")
    if factor <= 0:
        raise RuleError("pixel_shuffle_error_shape", op=op, shape=input,
                        problem=f"{'upscale' if op == 'pixel_shuffle' else 'downscale'}_factor must be greater than 0, got {factor}")
    *batch, c, h, w = input
    if op == "pixel_shuffle":
        if isinstance(c, int) and c % (factor * factor):
            raise RuleError("pixel_shuffle_error_shape", op=op, shape=input, problem=(
                f"expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but "
                f"input.size(-3)={c} is not divisible by {factor * factor}"))
        return (*batch, c // (factor * factor) if isinstance(c, int) else UNKNOWN,
                h * factor if isinstance(h, int) else UNKNOWN, w * factor if isinstance(w, int) else UNKNOWN)
    for name, size, k in (("height", h, -2), ("width", w, -1)):
        if isinstance(size, int) and size % factor:
            raise RuleError("pixel_shuffle_error_shape", op=op, shape=input, problem=(
                f"expects {name} to be divisible by downscale_factor, but input.size({k})={size} is not divisible "
                f"by {factor}"))
    return (*batch, c * factor * factor if isinstance(c, int) else UNKNOWN,
            h // factor if isinstance(h, int) else UNKNOWN, w // factor if isinstance(w, int) else UNKNOWN)


_MODE_RANKS = {"linear": (3,), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,), "lanczos": (4,)}
# the modes that take no ``align_corners`` (torch: a ValueError when it is given at all, even False)
_UNALIGNED_MODES = ("nearest", "area", "nearest-exact")


def interpolate_shape(input: Shape, size: tuple[int, ...] | int | None,
                      scale_factor: tuple[float, ...] | float | None, mode: str = "nearest",
                      op: str = "interpolate", align_corners: bool | None = None, antialias: bool = False) -> Shape:
    """``F.interpolate`` and ``nn.Upsample``: (N, C, *S) with 1-3 spatial dims; each spatial size becomes ``size``
    or ``floor(S * scale_factor)``. ``linear``/``bilinear``/``bicubic``/``trilinear``/``lanczos`` need
    1/2/2/3/2 spatial dims. torch's order: ``align_corners`` for a mode without corners, size and scale_factor
    (ValueError), ``antialias`` outside bilinear/bicubic/lanczos of a 4-D input (ValueError), the input's rank for
    the mode, then lanczos' own options."""
    if align_corners is not None and mode in _UNALIGNED_MODES:
        raise RuleError("upsample_error_option", op=op, problem="align_corners option can only be set with the "
                        "interpolating modes: linear | bilinear | bicubic | trilinear")
    nd = len(input) - 2
    spatial = list(input[2:])
    sizes: tuple[Dim, ...] | None = None
    scales: tuple[float, ...] | None = None
    if size is not None and scale_factor is not None:
        raise RuleError("upsample_error_size", op=op, problem="only one of size or scale_factor should be defined")
    if size is not None:
        sizes = (size,) * max(nd, 0) if isinstance(size, int) else tuple(size)
        if not isinstance(size, int) and len(sizes) != nd:
            raise RuleError("upsample_error_size", op=op, problem=(
                f"Input and output must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {spatial} and output size of {sizes}"))
    elif scale_factor is not None:
        scales = ((float(scale_factor),) * max(nd, 0) if isinstance(scale_factor, (int, float))
                  else tuple(map(float, scale_factor)))
        if not isinstance(scale_factor, (int, float)) and len(scales) != nd:
            raise RuleError("upsample_error_size", op=op, problem=(
                f"Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
                f"dimensions of {spatial} and scale_factor of shape {scales}"))
    else:
        raise RuleError("upsample_error_size", op=op, problem="either size or scale_factor should be defined")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and len(input) == 4):
        raise RuleError("upsample_error_option", op=op, problem="Anti-alias option is restricted to bilinear, "
                        "bicubic, and lanczos modes and requires a 4-D tensor as input")
    if mode not in _MODE_RANKS and mode not in _UNALIGNED_MODES:
        raise RuleError("upsample_error_mode", op=op, mode=mode)
    ranks = _MODE_RANKS.get(mode, (3, 4, 5))
    if len(input) not in ranks:
        expected = " or ".join(f"{r}-D" for r in ranks)
        raise RuleError("upsample_error_input_rank", op=op, expected=expected, mode=mode, shape=input)
    if mode == "lanczos" and align_corners:
        raise RuleError("upsample_error_option", op=op, problem="Lanczos mode does not support align_corners=True")
    if mode == "lanczos" and not antialias:
        raise RuleError("upsample_error_option", op=op, problem="Lanczos mode requires antialias=True")
    if sizes is None:
        assert scales is not None
        sizes = tuple(math.floor(s * f) if isinstance(s, int) else UNKNOWN for s, f in zip(input[2:], scales))
    if any(isinstance(d, int) and d <= 0 for d in (*input[2:], *sizes)):
        raise RuleError("upsample_error_empty_output", op=op, input=tuple(input[2:]), output=sizes)
    return tuple(input[:2]) + sizes


def distance_shape(x1: Shape, x2: Shape, dim: int = -1, keepdim: bool = False, op: str = "cosine_similarity") -> Shape:
    """``cosine_similarity`` (reduces ``dim``) and ``pairwise_distance`` (reduces the last dim, ``keepdim``
    keeps it as 1; 1-D inputs without keepdim give a 0-D result): the inputs broadcast first."""
    out = broadcast_pair(x1, x2, op)
    d = wrap_dim(dim, len(out), op)
    if not out:
        return (1,) if keepdim else ()
    return out[:d] + ((1,) if keepdim else ()) + out[d + 1:]


# -- attention and transformer layers --------------------------------------------------------------------------


def _attention_error(op: str, q: Shape, k: Shape, v: Shape, problem: str) -> RuleError:
    return RuleError("attention_error_shape_mismatch", op=op, q=q, k=k, v=v, problem=problem)


def mha_shape(query: Shape, key: Shape, value: Shape, embed_dim: Dim, kdim: Dim | None = None,
              vdim: Dim | None = None, batch_first: bool = False, need_weights: bool = True,
              average_attn_weights: bool = True, num_heads: Dim = UNKNOWN,
              op: str = "multi_head_attention_forward") -> tuple[Shape, Shape | None]:
    """``nn.MultiheadAttention``: query (L, N, E), key (S, N, kdim), value (S, N, vdim) (batch first: N leads;
    unbatched: no N). Returns the output (L, N, E) and the attention weights, (N, L, S) averaged over the heads
    or (N, H, L, S) (None without ``need_weights``). torch's checks, in its order."""
    kdim = embed_dim if kdim is None else kdim
    vdim = embed_dim if vdim is None else vdim
    if len(query) == 3 and (len(key), len(value)) != (3, 3):
        raise _attention_error(op, query, key, value, "For batched (3-D) `query`, expected `key` and `value` to be "
                               f"3-D but found {len(key)}-D and {len(value)}-D tensors respectively")
    if len(query) == 2 and (len(key), len(value)) != (2, 2):
        raise _attention_error(op, query, key, value, "For unbatched (2-D) `query`, expected `key` and `value` to be "
                               f"2-D but found {len(key)}-D and {len(value)}-D tensors respectively")
    if len(query) not in (2, 3):
        raise _attention_error(op, query, key, value, "query should be unbatched 2D or batched 3D tensor but "
                               f"received {len(query)}-D query tensor")
    if differ(query[-1], embed_dim):
        raise _attention_error(op, query, key, value,
                               f"was expecting embedding dimension of {embed_dim}, but got {query[-1]}")
    if any(differ(a, b) for a, b in zip(key[:-1], value[:-1])):
        raise _attention_error(op, query, key, value, f"key shape {fmt_shape(key)} does not match value shape "
                               f"{fmt_shape(value)}")
    for name, s, want in (("key", key, kdim), ("value", value, vdim)):
        if differ(s[-1], want):
            raise _attention_error(op, query, key, value,
                                   f"{name} has embedding dimension {s[-1]}, but the layer's {name[0]}dim is {want}")
    b = 0 if batch_first else 1
    if len(query) == 3 and differ(query[b], key[b]):
        raise _attention_error(op, query, key, value, f"key batch size {key[b]} does not match query batch size "
                               f"{query[b]}")
    q_len, s_len = (query[1 if batch_first else 0], key[1 if batch_first else 0]) if len(query) == 3 else (
        query[0], key[0])
    if not need_weights:
        return query, None
    lead: Shape = (query[b],) if len(query) == 3 else ()
    heads: Shape = () if average_attn_weights else (num_heads,)
    return query, lead + heads + (q_len, s_len)


def transformer_layer_shape(src: Shape, d_model: Dim, batch_first: bool = False, memory: Shape | None = None,
                            op: str = "multi_head_attention_forward") -> Shape:
    """A TransformerEncoderLayer (``memory`` None) or TransformerDecoderLayer, and their stacks: self-attention
    over ``src`` (the decoder's ``tgt``), then the decoder's attention over ``memory``; the shape is kept."""
    out, _ = mha_shape(src, src, src, d_model, batch_first=batch_first, need_weights=False, op=op)
    if memory is not None:
        out, _ = mha_shape(out, memory, memory, d_model, batch_first=batch_first, need_weights=False, op=op)
    return out


def transformer_shape(src: Shape, tgt: Shape, d_model: Dim, batch_first: bool = False,
                      op: str = "Transformer") -> Shape:
    """``nn.Transformer(src, tgt)``: torch's own two checks, then the encoder over src and the decoder over
    (tgt, memory of src's shape); the output has tgt's shape."""
    b = 0 if batch_first else 1
    if b:  # torch reads src.size(1) and tgt.size(1) before it asks whether the input is batched
        wrap_dim(b, len(src), op)
        wrap_dim(b, len(tgt), op)
    if len(src) == 3 and len(tgt) > b and differ(src[b], tgt[b]):
        raise RuleError("transformer_error_shape_mismatch", op=op, shapes=(src, tgt),
                        problem="the batch number of src and tgt must be equal")
    if differ(src[-1], d_model) or differ(tgt[-1], d_model):
        raise RuleError("transformer_error_shape_mismatch", op=op, shapes=(src, tgt),
                        problem="the feature number of src and tgt must be equal to d_model")
    memory = transformer_layer_shape(src, d_model, batch_first)
    return transformer_layer_shape(tgt, d_model, batch_first, memory)
