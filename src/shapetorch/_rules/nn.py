"""Shape rules of the neural-network ops: convolution, transposed convolution, pooling, attention,
normalisation and losses. Standard library only; gradual like every rule (unknowns never raise)."""

from __future__ import annotations

import math

from .broadcast import broadcast_pair
from .dims import UNKNOWN, Dim, Shape, differ
from .errors import RuleError

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
    if isinstance(c_out, int) and c_out % groups:
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"out_channels divisible by groups ({c_out} % {groups} != 0)", got=c_in)
    if _ints(c_in, weight[1]) and c_in != weight[1] * groups:  # type: ignore[operator]
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"{weight[1] * groups} channels", got=c_in)  # type: ignore[operator]
    kernel = tuple(k if isinstance(k, int) else 1 for k in weight[2:])
    spatial = _window(op, input, lead, kernel, stride, padding, dilation)
    return input[: lead - 1] + (c_out,) + spatial


def conv_transpose_shape(input: Shape, weight: Shape, stride: tuple[int, ...], padding: tuple[int, ...],
                         output_padding: tuple[int, ...], dilation: tuple[int, ...], groups: int = 1,
                         op: str = "conv_transpose2d") -> Shape:
    """``conv_transpose{n}d``: weight (C_in, C_out / groups, *K); out = (L-1)s - 2p + d(k-1) + op + 1."""
    nd = len(weight) - 2
    lead = _spatial_rank(op, input, nd)
    _positive(op, "stride", stride)
    _positive(op, "dilation", dilation)
    _positive(op, "padding", padding, 0)
    c_in = input[lead - 1]
    if differ(c_in, weight[0]):
        raise RuleError("conv_error_channels_mismatch", op=op, groups=groups, weight=weight, shape=input,
                        expected=f"{weight[0]} channels", got=c_in)
    for o, s, d in zip(output_padding, stride, dilation):
        if o >= s and o >= d:
            raise RuleError("conv_error_invalid_argument", op=op,
                            problem=f"output padding must be smaller than either stride or dilation, got {output_padding}")
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
    if len(input) not in (nd + 1, nd + 2):
        raise RuleError("conv_error_input_rank", op=op, unbatched=nd + 1, batched=nd + 2, shape=input)
    lead = len(input) - nd
    if nonempty and any(s == 0 for s in input[lead:]):
        raise RuleError("reduction_error_empty_input", op=op, shape=input)
    return input[:lead] + tuple(input[lead + i] if o is None else o for i, o in enumerate(output_size))


def attention_shape(query: Shape, key: Shape, value: Shape, mask: Shape | None = None,
                    op: str = "scaled_dot_product_attention") -> Shape:
    """query (..., L, E), key (..., S, E), value (..., S, Ev) -> (..., L, Ev); mask broadcasts to (..., L, S)."""
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
    batch = broadcast_pair(query[:-2], broadcast_pair(key[:-2], value[:-2], op), op)
    if mask is not None:
        broadcast_pair(mask, batch + (query[-2], key[-2]), op)
    return batch + (query[-2], value[-1])


def normalized_shape_check(input: Shape, normalized: Shape, op: str = "layer_norm") -> None:
    """layer_norm: the trailing dims of the input must equal ``normalized_shape``."""
    n = len(normalized)
    if len(input) < n or any(differ(a, b) for a, b in zip(input[len(input) - n:], normalized)):
        raise RuleError("layer_norm_error_shape_mismatch", op=op, shape=input, normalized=normalized)


# The input ranks each BatchNorm layer takes: (C) features with a batch or without ((N, C) or (N, C, L)), or
# images ((N, C, H, W)). One table for the layers and the plugin.
BATCH_NORM_RANKS: dict[str, tuple[int, ...]] = {"BatchNorm1d": (2, 3), "BatchNorm2d": (4,)}


def batch_norm_rank_check(input: Shape, op: str) -> None:
    """A BatchNorm layer's input rank, with torch's words: ``expected 4D input (got 3D input)``."""
    ranks = BATCH_NORM_RANKS[op]
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


def one_hot_shape(input: Shape, num_classes: Dim, op: str = "one_hot") -> Shape:
    """one_hot: the input's shape and a last dim of ``num_classes`` (-1: the largest class + 1, known from the
    values only)."""
    return (*input, UNKNOWN if num_classes == -1 else num_classes)


def interpolate_shape(input: Shape, size: tuple[Dim, ...] | None, scale_factor: tuple[float, ...] | None,
                      op: str = "interpolate") -> Shape:
    """interpolate: (N, C, *spatial) resized to ``size``, or to ``floor(spatial * scale_factor)`` per spatial dim
    (one value stands for every spatial dim)."""
    if len(input) < 3:
        raise RuleError("conv_error_input_rank", op=op, unbatched=3, batched=4, shape=input)
    nd = len(input) - 2
    if size is not None:
        out = size * nd if len(size) == 1 else size
    elif scale_factor is not None:
        sf = scale_factor * nd if len(scale_factor) == 1 else scale_factor
        out = tuple(math.floor(s * f) if isinstance(s, int) else UNKNOWN for s, f in zip(input[2:], sf))
    else:
        return (*input[:2], *(UNKNOWN,) * nd)
    if len(out) != nd:
        return (*input[:2], *(UNKNOWN,) * nd)  # a count mismatch is the op's argument check (torch's ValueError)
    return (*input[:2], *out)
