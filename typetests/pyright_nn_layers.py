# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# pyright (no plugin) on the recurrent, padding, pixel-shuffle, Upsample and distance layers: the stubs alone
# give any-shaped tensors of the input's dtype (the plugin computes the shapes), except for a recurrent layer of a
# literal configuration (see pyright_shapes.py), and nothing real is an error.
from typing import Any, Literal as L, TypeVar, assert_type

from shapetorch import Tensor, float32, float64, int64, nn
from shapetorch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence, pad_sequence

B = TypeVar("B")
AnyT = Tensor[tuple[Any, ...], float32]


def recurrent(seq: Tensor[tuple[L[7], B, L[10]], float32], h0: Tensor[tuple[L[1], B, L[20]], float32],
              d: Tensor[tuple[L[7], L[10]], float64], v: Tensor[tuple[L[10]], float32], n: int) -> None:
    lstm = nn.LSTM(10, 20, batch_first=False)
    assert_type(lstm, nn.LSTM[L[10], L[20], tuple[L[1], L[False], L[False], L[0]]])
    out, (h, c) = lstm(seq)
    assert_type(out, Tensor[tuple[L[7], B, Any], float32])  # D * hidden_size is arithmetic
    assert_type(h, Tensor[tuple[L[1], B, L[20]], float32])
    assert_type(c, Tensor[tuple[L[1], B, L[20]], float32])
    assert_type(lstm(seq, (h0, h0))[0], Tensor[tuple[L[7], B, Any], float32])
    assert_type(nn.GRU(10, 20)(d), tuple[Tensor[tuple[L[7], Any], float64], Tensor[tuple[L[1], L[20]], float64]])
    assert_type(nn.RNN(10, 20)(seq, h0)[1], Tensor[tuple[L[1], B, L[20]], float32])
    assert_type(nn.LSTM(10, n)(seq), Any)  # a size known only as an int: an Any configuration, Any results
    packed = pack_padded_sequence(seq, [7, 5])
    out_packed, (h_packed, _) = lstm(packed)
    assert_type(out_packed, PackedSequence)
    assert_type(h_packed, Tensor[tuple[Any, ...], Any])
    assert_type(pad_packed_sequence(out_packed)[1], Tensor[tuple[Any], int64])
    assert_type(pad_sequence([v, v]), AnyT)
    assert_type(nn.LSTMCell(10, 20)(v), tuple[AnyT, AnyT])
    assert_type(nn.GRUCell(10, 20)(v, h0), AnyT)
    assert_type(nn.RNNCell(10, 20)(v), AnyT)
    lstm.flatten_parameters()
    assert_type(lstm.hidden_size, int)


def layers(img: Tensor[tuple[B, L[3], L[8], L[8]], float32], a: Tensor[tuple[L[4], L[16]], float32]) -> None:
    assert_type(nn.ZeroPad2d(1)(img), AnyT)
    assert_type(nn.ReflectionPad2d((1, 1, 2, 0))(img), AnyT)
    assert_type(nn.ConstantPad1d(2, 0.5)(a), AnyT)
    assert_type(nn.PixelShuffle(2)(img), AnyT)
    assert_type(nn.PixelUnshuffle(2)(img), AnyT)
    assert_type(nn.Upsample(scale_factor=1.5, mode="bilinear")(img), AnyT)
    assert_type(nn.CosineSimilarity(dim=0)(a, a), AnyT)
    assert_type(nn.PairwiseDistance(keepdim=True)(a, a), AnyT)
    model = nn.Sequential(nn.ZeroPad2d(1), nn.PixelUnshuffle(2), nn.Upsample(size=(4, 4)))
    model(img)


def attention(src: Tensor[tuple[L[10], B, L[32]], float32], tgt: Tensor[tuple[L[7], B, L[32]], float32]) -> None:
    mha = nn.MultiheadAttention(32, 4)
    out, weights = mha(tgt, src, src)
    assert_type(out, AnyT)
    assert_type(weights, AnyT | None)
    layer = nn.TransformerEncoderLayer(32, 4, batch_first=False)
    assert_type(nn.TransformerEncoder(layer, 2)(src), AnyT)
    assert_type(nn.TransformerDecoder(nn.TransformerDecoderLayer(32, 4), 2)(tgt, src), AnyT)
    model = nn.Transformer(32, 4, 1, 1, 64)
    assert_type(model(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(7)), AnyT)
    assert_type(model.encoder, nn.TransformerEncoder[Any, Any])


def pooling_layers(img: Tensor[tuple[B, L[8], L[32], L[32]], float32]) -> None:
    assert_type(nn.AvgPool2d(2)(img), AnyT)
    assert_type(nn.AdaptiveAvgPool2d(1)(img), AnyT)
    values, indices = nn.MaxPool2d(2, return_indices=True)(img)  # (values, indices): Any in the stubs


def linear_of_any(x: Any, y: Tensor[Any, Any], v: Tensor[tuple[L[32]], float32], w: Tensor[tuple[B, L[32]], float32]) -> Tensor[tuple[B, L[9], L[30]], float32]:
    head = nn.Linear(32, 30)
    assert_type(head(v), Tensor[tuple[L[30]], float32])  # a 1-D input keeps its rank
    head(y).mean()
    assert_type(head(w), Tensor[tuple[B, L[30]], float32])
    return head(x)  # an Any input gives Any (not a rank-2 result, which would be a false error here)


def arange_of_a_size_from_shape(img: Tensor[tuple[B, L[6]], float32]) -> None:
    nn.Linear(6, 6)(img)
    from shapetorch import arange
    arange(img.shape[0])  # a TypeVar size read from .shape is a valid bound
