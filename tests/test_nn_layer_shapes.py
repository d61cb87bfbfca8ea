"""The shape rules of the recurrent, padding, pixel-shuffle, Upsample, distance and Transformer layers against torch.

Each test draws a layer configuration and inputs of any rank (good and bad), runs the layer in torch and in
shapetorch, and requires the same verdict: the same result shapes, or an error in both, shapetorch's with the
layer's catalogue code and torch's builtin exception class (see ``_same_class`` for the documented exceptions).
The runtime layer checks its ``_rules.nn`` rule before computing, and the plugin runs the same rule, so this also
pins what the plugin reports (``typetests/plugin_ops_nn_layers.py`` pins the messages).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from hypothesis import given
from hypothesis import strategies as hs

import shapetorch as st
from _oracle import fast
from shapetorch._rules import nn as RN
from shapetorch._rules.errors import RuleError

sizes = hs.integers(1, 4)


def _shapes(out: Any) -> Any:
    if isinstance(out, (tuple, list)):
        return tuple(_shapes(o) for o in out)
    if out is None:
        return None
    return tuple(out.shape)


def _same_class(theirs: BaseException, ours: BaseException) -> bool:
    """torch's builtin class, but: torch raises AssertionError for a Transformer layer fed the wrong embedding
    size, where shapetorch raises its RuntimeError (docs/compatibility.md)."""
    if isinstance(theirs, NotImplementedError):
        return isinstance(ours, NotImplementedError)
    if type(theirs) is AssertionError:
        return isinstance(ours, RuntimeError)
    return any(isinstance(ours, c) for c in (RuntimeError, ValueError, IndexError, TypeError) if isinstance(theirs, c))


def same_verdict(build: Callable[[Any], Any], codes: set[str], *arrays: np.ndarray,
                 states: Callable[[Any, list[Any]], tuple[Any, ...]] | None = None,
                 rule: Callable[[], Any] | None = None) -> None:
    """``build(lib)`` makes the layer; it is called on ``arrays`` (made tensors), then on ``states`` if given.
    ``rule()`` runs the layer's shape rule as the plugin does: it must give torch's shapes, or the runtime's code."""
    verdict: tuple[str, Any] | None = None
    if rule is not None:
        try:
            verdict = ("ok", rule())
        except RuleError as e:
            verdict = ("error", e.code)
    results: list[Any] = []
    for lib in (torch, st):
        lib.manual_seed(0)
        tensors = [lib.tensor(a) for a in arrays]
        args = tuple(tensors) if states is None else states(lib, tensors)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                results.append(("ok", _shapes(build(lib)(*args))))
        except Exception as e:  # noqa: BLE001 - the verdict is the comparison
            results.append(("error", e))
    (tk, tv), (sk, sv) = results
    if tk == "ok":
        if sk == "error":
            raise sv
        assert sv == tv, f"shapes: shapetorch {sv}, torch {tv}"
        assert verdict is None or verdict == ("ok", tv), f"the rule gives {verdict}, torch {tv}"
        return
    assert sk == "error", f"torch raised {tv!r}; shapetorch returned {sv}"
    assert isinstance(sv, st.ShapetorchError), f"not a catalogued error: {sv!r} (torch: {tv!r})"
    assert sv.code in codes, f"code {sv.code}: {sv} (torch: {tv})"
    assert _same_class(tv, sv), f"torch {type(tv).__name__}: {tv}; shapetorch {type(sv).__mro__}"
    assert verdict is None or verdict == ("error", sv.code), f"the rule gives {verdict}, the runtime {sv.code}"


def _zeros(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


mostly_true = hs.sampled_from([True, True, True, False])


def ranked(ranks: list[int]) -> hs.SearchStrategy[list[int]]:
    """Sizes of a rank drawn from ``ranks`` (mostly the ones the layer takes)."""
    return hs.sampled_from(ranks).flatmap(lambda r: hs.lists(sizes, min_size=r, max_size=r))


RNN_CODES = {"rnn_error_input_rank", "rnn_error_input_size", "rnn_error_hidden_shape"}


@fast(25)
@given(hs.sampled_from(["RNN", "LSTM", "GRU"]), sizes, sizes, hs.integers(1, 2), hs.booleans(), hs.booleans(),
       hs.integers(0, 2), ranked([3, 3, 3, 2, 2, 1, 4]), mostly_true, hs.data())
def test_recurrent_layers_shapes_and_errors(kind: str, input_size: int, hidden: int, layers: int, bidirectional: bool,
                                            batch_first: bool, proj: int, lead: list[int], right_size: bool,
                                            data: hs.DataObject) -> None:
    proj = proj if kind == "LSTM" and proj < hidden + 1 else 0
    proj = min(proj, hidden - 1) if proj else 0
    shape = (*lead[:-1], input_size if right_size else input_size + 1)
    directions = 2 if bidirectional else 1
    batched = len(shape) == 3
    batch = (shape[0] if batch_first else shape[1]) if batched else None
    h_size = proj or hidden
    good_h = (layers * directions, *([batch] if batched else []), h_size)
    good_c = (layers * directions, *([batch] if batched else []), hidden)
    for state in range(5):  # every kind of initial state for each configuration
        # state 0: none; 1: right shapes; 2: wrong batch/size in h; 3: wrong c (LSTM); 4: wrong rank
        h_shape, c_shape = good_h, good_c
        if state == 2:
            h_shape = (*good_h[:-1], good_h[-1] + data.draw(hs.integers(1, 2)))
        if state == 3:
            c_shape = (good_c[0] + 1, *good_c[1:])
        if state == 4:
            h_shape = c_shape = good_h[1:] if len(good_h) > 1 else (1, *good_h)

        def states(lib: Any, tensors: list[Any]) -> tuple[Any, ...]:
            if state == 0:
                return tuple(tensors)
            h0 = lib.zeros(h_shape)
            return (tensors[0], (h0, lib.zeros(c_shape)) if kind == "LSTM" else h0)

        def build(lib: Any) -> Any:
            kw = {"proj_size": proj} if kind == "LSTM" else {}
            return getattr(lib.nn, kind)(input_size, hidden, layers, batch_first=batch_first, bidirectional=bidirectional,
                                         **kw)

        def rule() -> Any:
            lstm = kind == "LSTM"
            out, h_n, c_n = RN.rnn_shape(shape, input_size, hidden, layers, bidirectional, batch_first, proj,
                                         h_shape if state else None, c_shape if state and lstm else None, kind)
            return (out, (h_n, c_n)) if lstm else (out, h_n)

        same_verdict(build, RNN_CODES, _zeros(shape), states=states, rule=rule)


@fast(40)
@given(hs.sampled_from(["RNNCell", "LSTMCell", "GRUCell"]), sizes, sizes, ranked([2, 2, 1, 1, 3]), mostly_true,
       hs.integers(0, 3))
def test_cells_shapes_and_errors(kind: str, input_size: int, hidden: int, lead: list[int], right_size: bool,
                                 state: int) -> None:
    shape = (*lead[:-1], input_size if right_size else input_size + 1)
    good = (*shape[:-1], hidden)
    h_shape = {0: good, 1: good, 2: (*good[:-1], hidden + 1), 3: (good[0] + 1, *good[1:])}[state]

    def states(lib: Any, tensors: list[Any]) -> tuple[Any, ...]:
        if state == 0:
            return tuple(tensors)
        h0 = lib.zeros(h_shape)
        return (tensors[0], (lib.zeros(good), h0) if kind == "LSTMCell" else h0)

    def rule() -> Any:
        lstm = kind == "LSTMCell"
        hx, cx = ((good, h_shape) if lstm else (h_shape, None)) if state else (None, None)
        out = RN.rnn_cell_shape(shape, input_size, hidden, hx, cx, kind)
        return (out, out) if lstm else out

    same_verdict(lambda lib: getattr(lib.nn, kind)(input_size, hidden), RNN_CODES | {"rnn_cell_error_input_size"},
                 _zeros(shape), states=states, rule=rule)


PAD_CODES = {"pad_error_invalid_padding", "pad_error_input_rank", "pad_error_circular_rank"}


@fast(60)
@given(hs.sampled_from(["Zero", "Constant", "Reflection", "Replication", "Circular"]), hs.integers(1, 3),
       hs.one_of(hs.integers(0, 3), hs.lists(hs.integers(-2, 3), min_size=1, max_size=7)),
       hs.lists(sizes, min_size=1, max_size=5))
def test_padding_layers_shapes_and_errors(kind: str, dims: int, padding: int | list[int], shape: list[int]) -> None:
    name = f"{kind}Pad{dims}d"
    pad = [padding] * 2 * dims if isinstance(padding, int) else padding
    for i in range(min(len(pad) // 2, len(shape))):
        lo, hi, size = pad[2 * i], pad[2 * i + 1], shape[-1 - i]
        kept = size + min(lo, 0) + min(hi, 0)
        if kind == "Circular" and min(lo, hi) < 0 and (kept <= 0 or max(lo, hi) > kept):
            return  # torch wraps around a crop smaller than its pad by reading past it (docs/compatibility.md)
    args = (padding if isinstance(padding, int) else tuple(padding),) + ((0.5,) if kind == "Constant" else ())
    mode = {"Zero": "constant", "Constant": "constant", "Reflection": "reflect", "Replication": "replicate",
            "Circular": "circular"}[kind]
    same_verdict(lambda lib: getattr(lib.nn, name)(*args), PAD_CODES, _zeros(tuple(shape)),
                 rule=lambda: RN.pad_layer_shape(tuple(shape), tuple(pad), mode, dims, name))


@fast(40)
@given(hs.booleans(), hs.integers(1, 3), hs.lists(sizes, max_size=2), hs.integers(0, 4), mostly_true, mostly_true,
       hs.integers(1, 3), hs.integers(1, 3))
def test_pixel_shuffle_layers_shapes_and_errors(shuffle: bool, factor: int, batch: list[int], rank_cut: int,
                                                channels_fit: bool, sides_fit: bool, h: int, w: int) -> None:
    c = (factor * factor if shuffle else 1) * (1 if channels_fit else factor * factor + 1)
    h, w = (h * factor, w * factor) if not shuffle and sides_fit else (h, w + (0 if sides_fit else 1))
    shape = [*batch, c, h, w][max(rank_cut - 2, 0):]  # now and then fewer than 3 dims
    name = "PixelShuffle" if shuffle else "PixelUnshuffle"
    same_verdict(lambda lib: getattr(lib.nn, name)(factor), {"pixel_shuffle_error_shape"}, _zeros(tuple(shape)),
                 rule=lambda: RN.pixel_shuffle_shape(tuple(shape), factor, "pixel_shuffle" if shuffle else "pixel_unshuffle"))


@fast(40)
@given(hs.sampled_from(["nearest", "linear", "bilinear"]),
       hs.one_of(hs.none(), hs.integers(1, 5), hs.lists(hs.integers(1, 5), min_size=1, max_size=3)),
       hs.one_of(hs.none(), hs.sampled_from([2, 0.5, 1.5, 3.0]), hs.lists(hs.sampled_from([2, 1.5]), min_size=1,
                                                                           max_size=3)),
       hs.lists(hs.integers(1, 4), min_size=2, max_size=5))
def test_upsample_shapes_and_errors(mode: str, size: Any, scale: Any, shape: list[int]) -> None:
    size = tuple(size) if isinstance(size, list) else size
    scale = tuple(scale) if isinstance(scale, list) else scale
    same_verdict(lambda lib: lib.nn.Upsample(size, scale, mode), {"upsample_error_size", "upsample_error_input_rank", "upsample_error_empty_output"},
                 _zeros(tuple(shape)), rule=lambda: RN.interpolate_shape(tuple(shape), size, scale, mode, "Upsample"))


@fast(40)
@given(hs.booleans(), hs.lists(sizes, min_size=1, max_size=3), hs.lists(hs.sampled_from([1, 2, 3]), min_size=1,
                                                                     max_size=3), hs.integers(-3, 2), hs.booleans())
def test_distance_layers_shapes_and_errors(cosine: bool, a: list[int], b: list[int], dim: int, keepdim: bool) -> None:
    def build(lib: Any) -> Any:
        return lib.nn.CosineSimilarity(dim) if cosine else lib.nn.PairwiseDistance(keepdim=keepdim)

    def rule() -> Any:
        if cosine:
            return RN.distance_shape(tuple(a), tuple(b), dim, False, "cosine_similarity")
        return RN.distance_shape(tuple(a), tuple(b), -1, keepdim, "pairwise_distance")

    same_verdict(build, {"broadcast_error_incompatible_dimensions", "dimension_error_out_of_range"},
                 _zeros(tuple(a)), _zeros(tuple(b)), rule=rule)


ATTENTION_CODES = {"attention_error_shape_mismatch", "transformer_error_shape_mismatch", "dimension_error_out_of_range"}


@fast(20)
@given(hs.booleans(), mostly_true, hs.sampled_from([None, 4]), ranked([3, 3, 3, 2, 2, 4]), hs.integers(1, 3),
       hs.sampled_from(["ok", "ok", "ok", "embed", "batch", "key_len", "key_dim", "key_rank"]), hs.booleans(),
       hs.sampled_from([False, False, True]))
def test_multihead_attention_shapes_and_errors(batch_first: bool, need_weights: bool, kdim: int | None,
                                               lead: list[int], s_len: int, bad: str, average: bool,
                                               as_layer: bool) -> None:
    e = 8
    q = (*lead[:-1], e + (1 if bad == "embed" else 0))
    k = list(q[:-1]) + [kdim or e]
    seq = 1 if batch_first else 0
    if len(k) > 1:
        k[seq if len(k) == 3 else 0] = s_len
    if bad == "batch" and len(k) == 3:
        k[1 - seq] += 1
    v = list(k)
    if bad == "key_len":
        v[0] += 1
    if bad == "key_dim":
        k[-1] += 1
    if bad == "key_rank":
        k = v = k[1:] if len(k) > 1 else [2, *k]
    if as_layer:  # the Transformer layers run the same attention on their own input
        def layer(lib: Any) -> Any:
            return lib.nn.TransformerEncoderLayer(e, 2, 16, dropout=0.0, batch_first=batch_first)

        same_verdict(layer, ATTENTION_CODES, _zeros(q),
                     rule=lambda: RN.transformer_layer_shape(q, e, batch_first))
        return

    def build(lib: Any) -> Any:
        mha = lib.nn.MultiheadAttention(e, 2, kdim=kdim, vdim=kdim, batch_first=batch_first)
        return lambda *t: mha(*t, need_weights=need_weights, average_attn_weights=average)

    same_verdict(build, ATTENTION_CODES, _zeros(q), _zeros(tuple(k)), _zeros(tuple(v)),
                 rule=lambda: RN.mha_shape(q, tuple(k), tuple(v), e, kdim, kdim, batch_first, need_weights, average, 2))


@fast(15)
@given(hs.booleans(), ranked([3, 3, 2, 2, 1]), ranked([3, 3, 2, 2]), hs.booleans(), hs.booleans())
def test_transformer_shapes_and_errors(batch_first: bool, src: list[int], tgt: list[int], src_e: bool,
                                       tgt_e: bool) -> None:
    e = 8
    if len(src) == 1 and batch_first:
        return  # torch's own Python code fails on a 1-D src (an IndexError of a tuple): not a verdict to copy
    src_shape = (*src[:-1], e if src_e else e + 1)
    tgt_shape = (*tgt[:-1], e if tgt_e else e + 2)

    def build(lib: Any) -> Any:
        return lib.nn.Transformer(e, 2, 1, 1, 16, dropout=0.0, batch_first=batch_first)

    same_verdict(build, ATTENTION_CODES, _zeros(src_shape), _zeros(tgt_shape),
                 rule=lambda: RN.transformer_shape(src_shape, tgt_shape, e, batch_first))
