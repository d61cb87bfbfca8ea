# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# mypy WITHOUT the plugin on the recurrent, padding, pixel-shuffle, Upsample and distance layers: any-shaped
# results of the input's dtype, never a false error (the plugin's typetest plugin_ops_nn_layers.py has the shapes).
from typing import Any, Literal as L, TypeVar, reveal_type

from shapetorch import Tensor, float32, float64, nn
from shapetorch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

B = TypeVar("B")


def recurrent(seq: Tensor[tuple[L[7], B, L[10]], float32], h0: Tensor[tuple[L[1], B, L[20]], float32],
              d: Tensor[tuple[L[7], L[10]], float64], v: Tensor[tuple[L[10]], float32]) -> None:
    lstm = nn.LSTM(10, 20)
    reveal_type(lstm)  # N: shapetorch.nn.LSTM[Any, Any, Any]
    out, (h, c) = lstm(seq, (h0, h0))
    reveal_type(out)  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(c)  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.GRU(10, 20)(d))  # N: tuple[shapetorch.Tensor[tuple[Any, ...], shapetorch.float64], shapetorch.Tensor[tuple[Any, ...], shapetorch.float64]]
    reveal_type(lstm(pack_padded_sequence(seq, [7, 5]))[0])  # N: shapetorch.nn.utils.rnn.PackedSequence
    reveal_type(pad_packed_sequence(lstm(pack_padded_sequence(seq, [7, 5]))[0])[0])  # N: Tensor[tuple[Any, ...], Any]
    reveal_type(nn.LSTMCell(10, 20)(v))  # N: tuple[shapetorch.Tensor[tuple[Any, ...], shapetorch.float32], shapetorch.Tensor[tuple[Any, ...], shapetorch.float32]]
    reveal_type(nn.GRUCell(10, 20)(v, h0))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    nn.LSTM(7, 20)(seq)  # sizes are Any without the plugin: accepted


def layers(img: Tensor[tuple[B, L[3], L[8], L[8]], float32], a: Tensor[tuple[L[4], L[16]], float32]) -> None:
    reveal_type(nn.ZeroPad2d(1).padding)  # N: tuple[int, ...]
    reveal_type(nn.ZeroPad2d(1)(img))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.ReflectionPad1d((1, 2))(a))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.PixelShuffle(2)(img))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.Upsample(scale_factor=1.5)(img))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.CosineSimilarity()(a, a))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(nn.PairwiseDistance(keepdim=True)(a, a))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    nn.PixelShuffle(3)(img)  # not checked without the plugin


def attention(src: Tensor[tuple[L[10], B, L[32]], float32], tgt: Tensor[tuple[L[7], B, L[32]], float32]) -> None:
    out, weights = nn.MultiheadAttention(32, 4)(tgt, src, src)
    reveal_type(out)  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(32, 4), 2)
    reveal_type(enc(src))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    model = nn.Transformer(32, 4, 1, 1, 64)
    reveal_type(model(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(7)))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    model(src[0], tgt)  # not checked without the plugin
