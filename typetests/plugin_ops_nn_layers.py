# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# The recurrent, padding, pixel-shuffle, Upsample and distance layers under mypy + shapetorch_mypy: the
# constructor's literal arguments become the layer's type arguments, and a call runs the runtime's rule.
from typing import Any, Final, Literal as L, TypeVar, reveal_type

from shapetorch import Tensor, float32, float64, nn
from shapetorch.nn import functional as F

B = TypeVar("B")
HID: Final = 32


def recurrent(seq: Tensor[tuple[L[7], B, L[10]], float32], bseq: Tensor[tuple[B, L[7], L[10]], float32],
              one: Tensor[tuple[L[7], L[10]], float32], bad: Tensor[tuple[L[7], B, L[12]], float32],
              h0: Tensor[tuple[L[2], B, L[20]], float32], c0: Tensor[tuple[L[2], B, L[20]], float32],
              u: Tensor[tuple[Any, ...], float32], d: Tensor[tuple[L[7], B, L[10]], float64], n: int) -> None:
    lstm = nn.LSTM(10, 20)
    reveal_type(lstm)  # N: shapetorch.nn.LSTM[Literal[10], Literal[20], tuple[Literal[1], Literal[False], Literal[False], Literal[0]]]
    reveal_type(lstm(seq))  # N: tuple[shapetorch.Tensor[tuple[Literal[7], B, Literal[20]], shapetorch.float32], tuple[shapetorch.Tensor[tuple[Literal[1], B, Literal[20]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[1], B, Literal[20]], shapetorch.float32]]]
    out, (h, c) = nn.LSTM(10, HID, num_layers=2, bidirectional=True, batch_first=True, proj_size=5)(bseq)
    reveal_type(out)  # N: Tensor[tuple[B, Literal[7], Literal[10]], shapetorch.float32]
    reveal_type(h)  # N: Tensor[tuple[Literal[4], B, Literal[5]], shapetorch.float32]
    reveal_type(c)  # N: Tensor[tuple[Literal[4], B, Literal[32]], shapetorch.float32]
    reveal_type(nn.LSTM(10, 20)(one)[1][0])  # N: Tensor[tuple[Literal[1], Literal[20]], shapetorch.float32]
    reveal_type(nn.LSTM(10, 20, 2)(seq, (h0, c0))[0])  # N: Tensor[tuple[Literal[7], B, Literal[20]], shapetorch.float32]
    reveal_type(lstm.forward(d)[0])  # N: Tensor[tuple[Literal[7], B, Literal[20]], shapetorch.float64]
    lstm(bad)  # E: LSTM: input.size(-1) must be equal to input_size. Expected 10, got 12  [rnn_error_input_size]
    lstm(seq, (h0, c0))  # E: LSTM: Expected hidden[0] size (1, B, 20), got [2, B, 20]  [rnn_error_hidden_shape]
    nn.LSTM(10, 20, 2)(seq, (h0, h))  # E: LSTM: Expected hidden[1] size (2, B, 20), got [4, B, 5]  [rnn_error_hidden_shape]
    nn.LSTM(10, 20)(h0[0][0])  # E: LSTM: Expected input to be 2D or 3D, got 1D instead  [rnn_error_input_rank]
    gru = nn.GRU(10, 16, bidirectional=True)
    reveal_type(gru(seq))  # N: tuple[shapetorch.Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[2], B, Literal[16]], shapetorch.float32]]
    gru(seq, h0)  # E: GRU: Expected hidden size (2, B, 16), got [2, B, 20]  [rnn_error_hidden_shape]
    reveal_type(nn.RNN(10, 8, 3, nonlinearity="relu")(one))  # N: tuple[shapetorch.Tensor[tuple[Literal[7], Literal[8]], shapetorch.float32], shapetorch.Tensor[tuple[Literal[3], Literal[8]], shapetorch.float32]]
    nn.RNN(11, 8)(one)  # E: RNN: input.size(-1) must be equal to input_size. Expected 11, got 10  [rnn_error_input_size]
    reveal_type(nn.LSTM(n, 20))  # N: shapetorch.nn.LSTM[Any, Literal[20], tuple[Literal[1], Literal[False], Literal[False], Literal[0]]]
    reveal_type(nn.LSTM(n, 20)(seq)[0])  # N: Tensor[tuple[Literal[7], B, Literal[20]], shapetorch.float32]
    reveal_type(nn.LSTM(10, 20, batch_first=n > 0)(seq))  # N: tuple[Any, Any]
    reveal_type(lstm(u))  # N: tuple[Any, Any]


def cells(x: Tensor[tuple[B, L[10]], float32], v: Tensor[tuple[L[10]], float32], hx: Tensor[tuple[B, L[20]], float32],
          other: Tensor[tuple[L[3], L[20]], float32], wide: Tensor[tuple[B, L[21]], float32]) -> None:
    reveal_type(nn.LSTMCell(10, 20)(x))  # N: tuple[shapetorch.Tensor[tuple[B, Literal[20]], shapetorch.float32], shapetorch.Tensor[tuple[B, Literal[20]], shapetorch.float32]]
    reveal_type(nn.GRUCell(10, 20)(x, hx))  # N: Tensor[tuple[B, Literal[20]], shapetorch.float32]
    reveal_type(nn.RNNCell(10, 20)(v))  # N: Tensor[tuple[Literal[20]], shapetorch.float32]
    nn.RNNCell(12, 20)(x)  # E: RNNCell: input has inconsistent input_size: got 10 expected 12  [rnn_cell_error_input_size]
    nn.GRUCell(10, 20)(x, wide)  # E: GRUCell: hidden0 has inconsistent hidden_size: got 21, expected 20  [rnn_error_hidden_shape]
    nn.LSTMCell(10, 20)(x, (hx, wide))  # E: LSTMCell: hidden1 has inconsistent hidden_size: got 21, expected 20  [rnn_error_hidden_shape]
    nn.LSTMCell(10, 20)(x[None])  # E: LSTMCell: Expected input to be 1D or 2D, got 3D instead  [rnn_error_input_rank]
    reveal_type(nn.LSTMCell(10, 20))  # N: shapetorch.nn.LSTMCell[Literal[10], Literal[20]]


def padding(img: Tensor[tuple[B, L[3], L[8], L[8]], float32], flat: Tensor[tuple[L[4], L[5]], float32]) -> None:
    reveal_type(nn.ZeroPad2d(1))  # N: shapetorch.nn.ZeroPad2d[tuple[Literal[1], Literal[1], Literal[1], Literal[1]]]
    reveal_type(nn.ZeroPad2d(1)(img))  # N: Tensor[tuple[B, Literal[3], Literal[10], Literal[10]], shapetorch.float32]
    reveal_type(nn.ZeroPad2d((1, 2, -1, 0))(img))  # N: Tensor[tuple[B, Literal[3], Literal[7], Literal[11]], shapetorch.float32]
    reveal_type(nn.ConstantPad1d(2, 0.5)(flat))  # N: Tensor[tuple[Literal[4], Literal[9]], shapetorch.float32]
    reveal_type(nn.ReflectionPad2d((1, 1, 2, 0))(img))  # N: Tensor[tuple[B, Literal[3], Literal[10], Literal[10]], shapetorch.float32]
    reveal_type(nn.ReplicationPad1d(3)(flat))  # N: Tensor[tuple[Literal[4], Literal[11]], shapetorch.float32]
    reveal_type(nn.CircularPad3d(1)(img))  # N: Tensor[tuple[B, Literal[5], Literal[10], Literal[10]], shapetorch.float32]
    nn.ReflectionPad2d(1)(flat)  # E: ReflectionPad2d: reflect padding of 2 dim(s) needs a 3-D or 4-D input, but got input of shape (4, 5)  [pad_error_input_rank]
    nn.ReflectionPad2d(8)(img)  # E: padding size should be less than the corresponding input dimension, but got padding (8, 8) at dimension 3  [pad_error_invalid_padding]
    nn.ConstantPad3d(1, 0.0)(flat)  # E: ConstantPad3d: padding length must be even and at most twice the rank  [pad_error_invalid_padding]
    nn.ReplicationPad2d((1, 2, 3))(img)  # E: padding length must be even  [pad_error_invalid_padding]
    reveal_type(nn.ReflectionPad1d((2, -3))(img[0]))  # N: Tensor[tuple[Literal[3], Literal[8], Literal[7]], shapetorch.float32]
    nn.CircularPad2d(1)(flat)  # E: CircularPad2d: expected 3D or 4D input (got 2D input)  [pad_error_circular_rank]
    nn.ZeroPad2d((0, 0, -5, -4))(flat)  # E: the negative pads (-5, -4) crop more than dimension 0 holds (size 4)  [pad_error_invalid_padding]


def pixels(img: Tensor[tuple[B, L[8], L[6], L[6]], float32], odd: Tensor[tuple[L[8], L[5], L[6]], float32]) -> None:
    reveal_type(nn.PixelShuffle(2)(img))  # N: Tensor[tuple[B, Literal[2], Literal[12], Literal[12]], shapetorch.float32]
    reveal_type(nn.PixelUnshuffle(2)(img))  # N: Tensor[tuple[B, Literal[32], Literal[3], Literal[3]], shapetorch.float32]
    nn.PixelShuffle(3)(img)  # E: pixel_shuffle: expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)=8 is not divisible by 9  [pixel_shuffle_error_shape]
    nn.PixelUnshuffle(2)(odd)  # E: pixel_unshuffle: expects height to be divisible by downscale_factor, but input.size(-2)=5 is not divisible by 2  [pixel_shuffle_error_shape]
    nn.PixelShuffle(2)(img[0][0])  # E: pixel_shuffle: expects input to have at least 3 dimensions, but got input with 2 dimension(s)  [pixel_shuffle_error_shape]
    reveal_type(nn.Sequential(nn.ZeroPad2d(1), nn.PixelUnshuffle(2))(img))  # N: Tensor[tuple[B, Literal[32], Literal[4], Literal[4]], shapetorch.float32]


def upsample(img: Tensor[tuple[B, L[3], L[5], L[5]], float32], seq: Tensor[tuple[B, L[3], L[5]], float32],
             flat: Tensor[tuple[L[3], L[5]], float32], f: float) -> None:
    reveal_type(nn.Upsample(scale_factor=2)(img))  # N: Tensor[tuple[B, Literal[3], Literal[10], Literal[10]], shapetorch.float32]
    reveal_type(nn.Upsample(scale_factor=1.5)(img))  # N: Tensor[tuple[B, Literal[3], Literal[7], Literal[7]], shapetorch.float32]
    reveal_type(nn.Upsample(scale_factor=(2, 0.5), mode="bilinear")(img))  # N: Tensor[tuple[B, Literal[3], Literal[10], Literal[2]], shapetorch.float32]
    reveal_type(nn.Upsample(size=(7, 8))(img))  # N: Tensor[tuple[B, Literal[3], Literal[7], Literal[8]], shapetorch.float32]
    reveal_type(nn.Upsample(9, mode="linear")(seq))  # N: Tensor[tuple[B, Literal[3], Literal[9]], shapetorch.float32]
    nn.Upsample(scale_factor=2)(flat)  # E: Upsample: expected 3-D or 4-D or 5-D input (N, C, *spatial) for mode 'nearest', but got input of shape (3, 5)  [upsample_error_input_rank]
    nn.Upsample(scale_factor=2, mode="bilinear")(seq)  # E: Upsample: expected 4-D input (N, C, *spatial) for mode 'bilinear'  [upsample_error_input_rank]
    nn.Upsample(size=(7, 8))(seq)  # E: Upsample: Input and output must have the same number of spatial dimensions  [upsample_error_size]
    nn.Upsample()(img)  # E: Upsample: either size or scale_factor should be defined  [upsample_error_size]
    nn.Upsample(4, 2)(img)  # E: Upsample: only one of size or scale_factor should be defined  [upsample_error_size]
    reveal_type(nn.Upsample(scale_factor=f)(img))  # N: Tensor[Any, shapetorch.float32]


def distances(a: Tensor[tuple[B, L[16]], float32], b: Tensor[tuple[L[1], L[16]], float32],
              c: Tensor[tuple[B, L[8]], float32], v: Tensor[tuple[L[16]], float32]) -> None:
    reveal_type(nn.CosineSimilarity()(a, b))  # N: Tensor[tuple[B], shapetorch.float32]
    reveal_type(nn.CosineSimilarity(dim=0)(a, b))  # N: Tensor[tuple[Literal[16]], shapetorch.float32]
    reveal_type(nn.PairwiseDistance()(a, b))  # N: Tensor[tuple[B], shapetorch.float32]
    reveal_type(nn.PairwiseDistance(keepdim=True)(a, v))  # N: Tensor[tuple[B, Literal[1]], shapetorch.float32]
    reveal_type(nn.PairwiseDistance()(v, v))  # N: Tensor[tuple[()], shapetorch.float32]
    nn.CosineSimilarity()(a, c)  # E: cosine_similarity: shapes (B, 16) and (B, 8) cannot be broadcast  [broadcast_error_incompatible_dimensions]
    nn.CosineSimilarity(dim=2)(a, b)  # E: cosine_similarity: dimension out of range (expected to be in range of [-2, 1], but got 2)  [dimension_error_out_of_range]
    nn.PairwiseDistance()(a, c)  # E: pairwise_distance: shapes (B, 16) and (B, 8) cannot be broadcast  [broadcast_error_incompatible_dimensions]


def attention(src: Tensor[tuple[L[10], B, L[32]], float32], tgt: Tensor[tuple[L[7], B, L[32]], float32],
              narrow: Tensor[tuple[L[10], B, L[16]], float32], bsrc: Tensor[tuple[B, L[10], L[32]], float32],
              other: Tensor[tuple[L[10], L[3], L[32]], float32], kv: Tensor[tuple[L[10], B, L[8]], float32],
              one: Tensor[tuple[L[10], L[32]], float32], two: Tensor[tuple[L[7], L[2], L[32]], float32]) -> None:
    mha = nn.MultiheadAttention(32, 4)
    reveal_type(mha(tgt, src, src))  # N: tuple[shapetorch.Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32], shapetorch.Tensor[tuple[B, Literal[7], Literal[10]], shapetorch.float32]]
    reveal_type(mha(tgt, src, src, average_attn_weights=False)[1])  # N: Tensor[tuple[B, Literal[4], Literal[7], Literal[10]], shapetorch.float32]
    reveal_type(mha(tgt, src, src, need_weights=False)[1])  # N: None
    reveal_type(nn.MultiheadAttention(32, 4, kdim=8, vdim=8)(tgt, kv, kv)[0])  # N: Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32]
    mha(narrow, src, src)  # E: multi_head_attention_forward: was expecting embedding dimension of 32, but got 16  [attention_error_shape_mismatch]
    mha(tgt, src, kv)  # E: value has embedding dimension 8, but the layer's vdim is 32  [attention_error_shape_mismatch]
    mha(two, other, other)  # E: key batch size 3 does not match query batch size 2  [attention_error_shape_mismatch]
    mha(tgt, other, other)  # batch B against 3: not decided statically
    mha(tgt, one, one)  # E: For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 2-D tensors respectively  [attention_error_shape_mismatch]
    enc = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64)
    reveal_type(enc)  # N: shapetorch.nn.TransformerEncoderLayer[Literal[32], Literal[False]]
    reveal_type(enc(src))  # N: Tensor[tuple[Literal[10], B, Literal[32]], shapetorch.float32]
    reveal_type(nn.TransformerEncoder(enc, 2)(one))  # N: Tensor[tuple[Literal[10], Literal[32]], shapetorch.float32]
    nn.TransformerEncoder(enc, 2)(narrow)  # E: was expecting embedding dimension of 32, but got 16  [attention_error_shape_mismatch]
    reveal_type(nn.TransformerEncoderLayer(32, 4, batch_first=True)(bsrc))  # N: Tensor[tuple[B, Literal[10], Literal[32]], shapetorch.float32]
    enc(src[None])  # E: query should be unbatched 2D or batched 3D tensor but received 4-D query tensor  [attention_error_shape_mismatch]
    dec = nn.TransformerDecoderLayer(32, 4)
    reveal_type(dec(tgt, src))  # N: Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32]
    reveal_type(nn.TransformerDecoder(dec, 3)(tgt, memory=src))  # N: Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32]
    dec(two, other)  # E: key batch size 3 does not match query batch size 2  [attention_error_shape_mismatch]
    model = nn.Transformer(32, 4, 1, 1, 64)
    reveal_type(model)  # N: shapetorch.nn.Transformer[Literal[32], Literal[False]]
    reveal_type(model(src, tgt))  # N: Tensor[tuple[Literal[7], B, Literal[32]], shapetorch.float32]
    model(other, two)  # E: Transformer: the batch number of src and tgt must be equal  [transformer_error_shape_mismatch]
    model(narrow, tgt)  # E: Transformer: the feature number of src and tgt must be equal to d_model  [transformer_error_shape_mismatch]
    nn.Transformer()(src, tgt)  # E: the feature number of src and tgt must be equal to d_model  [transformer_error_shape_mismatch]
    reveal_type(nn.Transformer.generate_square_subsequent_mask(7))  # N: Tensor[tuple[Any, Any], Any]


def pooling_layers(img: Tensor[tuple[B, L[8], L[32], L[32]], float32], seq: Tensor[tuple[B, L[4], L[10]], float32],
                   flat: Tensor[tuple[L[32], L[32]], float32], empty: Tensor[tuple[L[2], L[0]], float32]) -> None:
    reveal_type(nn.MaxPool2d(2))  # N: shapetorch.nn.MaxPool2d[tuple[tuple[Literal[2], Literal[2]], tuple[Literal[2], Literal[2]], tuple[Literal[0], Literal[0]], tuple[Literal[1], Literal[1]], Literal[False], Literal[False]]]
    reveal_type(nn.MaxPool2d(2)(img))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)(img))  # N: Tensor[tuple[B, Literal[8], Literal[17], Literal[17]], shapetorch.float32]
    reveal_type(nn.AvgPool1d(3)(seq))  # N: Tensor[tuple[B, Literal[4], Literal[3]], shapetorch.float32]
    reveal_type(nn.AdaptiveAvgPool2d((4, 2))(img))  # N: Tensor[tuple[B, Literal[8], Literal[4], Literal[2]], shapetorch.float32]
    reveal_type(nn.AdaptiveMaxPool1d(1)(seq))  # N: Tensor[tuple[B, Literal[4], Literal[1]], shapetorch.float32]
    nn.AdaptiveMaxPool1d(1)(empty)  # E: expected a reduction dim to be given for an input with 0 elements  [reduction_error_empty_input]
    reveal_type(nn.AdaptiveAvgPool1d(1)(empty))  # N: Tensor[tuple[Literal[2], Literal[1]], shapetorch.float32]
    reveal_type(nn.MaxPool2d(2, return_indices=True)(img))  # N: Any
    nn.MaxPool2d(4, padding=3)(img)  # E: max_pool2d: pad should be at most half of the kernel size  [pool_error_invalid_padding]
    nn.AvgPool2d(2)(img[0][0][0])  # E: avg_pool2d: expected 3-D (unbatched) or 4-D (batched) input, but got input of shape (32,)  [conv_error_input_rank]
    nn.MaxPool1d(20)(seq)  # E: max_pool1d: padded input size per channel (10,) is smaller than the kernel (20,)  [conv_error_kernel_too_large]
    reveal_type(nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.AdaptiveAvgPool2d(1), nn.Flatten())(img))  # N: Tensor[tuple[B, Literal[16]], shapetorch.float32]


def unflatten(x: Tensor[tuple[B, L[12], L[64]], float32]) -> None:
    reveal_type(nn.Unflatten(2, (8, 8)))  # N: shapetorch.nn.Unflatten[Literal[2], tuple[Literal[8], Literal[8]]]
    reveal_type(nn.Unflatten(-1, (4, -1))(x))  # N: Tensor[tuple[B, Literal[12], Literal[4], Literal[16]], shapetorch.float32]
    nn.Unflatten(1, (5, 3))(x)  # E: unflatten: sizes [5, 3] don't multiply up to the size 12 of dim 1 of (B, 12, 64)  [unflatten_error_size_mismatch]
    reveal_type(nn.Sequential(nn.Flatten(), nn.Unflatten(1, (64, 12)))(x))  # N: Tensor[tuple[B, Literal[64], Literal[12]], shapetorch.float32]


def sliding_blocks(img: Tensor[tuple[B, L[3], L[8], L[8]], float32], cols: Tensor[tuple[B, L[12], L[16]], float32]) -> None:
    reveal_type(F.unfold(img, 2, stride=2))  # N: Tensor[tuple[B, Literal[12], Literal[16]], shapetorch.float32]
    reveal_type(F.unfold(img, (3, 3), padding=1))  # N: Tensor[tuple[B, Literal[27], Literal[64]], shapetorch.float32]
    reveal_type(F.fold(cols, (8, 8), 2, stride=2))  # N: Tensor[tuple[B, Literal[3], Literal[8], Literal[8]], shapetorch.float32]
    F.fold(cols, (8, 8), 3)  # E: fold: Expected size of input's dimension 1 to be divisible by the product of kernel_size  [conv_error_invalid_argument]
    F.unfold(img, 9)  # E: calculated shape of the array of sliding blocks as (0, 0), but its components must be at least one.  [conv_error_invalid_argument]


def transposed_convs(img: Tensor[tuple[B, L[16], L[8], L[8]], float32], seq: Tensor[tuple[L[4], L[10]], float32]) -> None:
    reveal_type(nn.ConvTranspose2d(16, 8, 2, stride=2))  # N: shapetorch.nn.ConvTranspose2d[tuple[Literal[16], Literal[8], tuple[Literal[2], Literal[2]], tuple[Literal[2], Literal[2]], tuple[Literal[0], Literal[0]], tuple[Literal[0], Literal[0]], tuple[Literal[1], Literal[1]], Literal[1]]]
    reveal_type(nn.ConvTranspose2d(16, 8, 2, stride=2)(img))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1)(img))  # N: Tensor[tuple[B, Literal[8], Literal[15], Literal[15]], shapetorch.float32]
    reveal_type(nn.ConvTranspose2d(16, 8, (3, 4), stride=2, padding=1, output_padding=(1, 0), groups=4)(img))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(nn.ConvTranspose1d(4, 2, 3, dilation=2)(seq))  # N: Tensor[tuple[Literal[2], Literal[14]], shapetorch.float32]
    reveal_type(nn.ConvTranspose2d(16, 8, 2, stride=2)(img, output_size=(17, 17)))  # N: Tensor[Any, shapetorch.float32]
    nn.ConvTranspose2d(8, 8, 2)(img)  # E: conv_transpose2d: given groups=1 and weight of shape (8, 8, 2, 2), expected input (B, 16, 8, 8) to have 8 channels, but got 16 channels instead  [conv_error_channels_mismatch]
    nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=2)(seq)  # E: conv_transpose1d: output padding must be smaller than either stride or dilation, got (2,)  [conv_error_invalid_argument]
    nn.ConvTranspose1d(4, 2, 1, padding=6)(seq)  # E: conv_transpose1d  [conv_error_kernel_too_large]
