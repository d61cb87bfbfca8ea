# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# shapetorch.nn under mypy + shapetorch_mypy: literal layer sizes flow through forward().
# Run: python -m shapetorch.typetest typetests/nn_typetest.py
from typing import Any, Final, Literal as L, TypeVar, reveal_type

import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32, int64, nn

B = TypeVar("B")
HID: Final = 256


class Batch(Dim): ...


def linear(x: Tensor[tuple[B, L[784]], float32], bad: Tensor[tuple[B, L[100]], float32],
           u: Tensor[tuple[Any, ...], float32], p: Tensor[tuple[*tuple[Any, ...], L[784]], float32], n: int) -> None:
    fc = nn.Linear(784, HID)
    reveal_type(fc)  # N: shapetorch.nn.Linear[Literal[784], Literal[256]]
    reveal_type(fc(x))  # N: Tensor[tuple[B, Literal[256]], shapetorch.float32]
    fc(bad)  # E: matmul: inner dimensions do not match: (B, 100) @ (784, 256) (100 != 784)  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(fc.forward(x))  # N: Tensor[tuple[B, Literal[256]], shapetorch.float32]
    reveal_type(fc(u))  # N: Tensor[tuple[Any, ...], shapetorch.float32]
    reveal_type(fc(p))  # N: Tensor[tuple[*tuple[Any, ...], Literal[256]], shapetorch.float32]
    reveal_type(fc.weight)  # N: shapetorch.nn.Parameter[tuple[Literal[256], Literal[784]], Any]
    g = nn.Linear(n, 10)
    reveal_type(g)  # N: shapetorch.nn.Linear[Any, Literal[10]]
    reveal_type(g(bad))  # N: Tensor[tuple[B, Literal[10]], shapetorch.float32]
    y = fc(bad)  # E: inner dimensions do not match  [matmul_error_inner_dimensions_do_not_match]
    nn.Linear(256, 10)(y)  # after an error: unknown, no cascade


def conv(img: Tensor[tuple[B, L[3], L[32], L[32]], float32], one: Tensor[tuple[L[3], L[28], L[28]], float32],
         seq: Tensor[tuple[Batch, L[4], L[100]], float32], flat: Tensor[tuple[L[4], L[100]], float32]) -> None:
    reveal_type(nn.Conv2d(3, 16, 3, padding=1)(img))  # N: Tensor[tuple[B, Literal[16], Literal[32], Literal[32]], shapetorch.float32]
    reveal_type(nn.Conv2d(3, 16, kernel_size=5, stride=2)(img))  # N: Tensor[tuple[B, Literal[16], Literal[14], Literal[14]], shapetorch.float32]
    reveal_type(nn.Conv2d(3, 8, (3, 5), stride=(1, 2))(img))  # N: Tensor[tuple[B, Literal[8], Literal[30], Literal[14]], shapetorch.float32]
    reveal_type(nn.Conv2d(3, 8, 3, padding="same")(img))  # N: Tensor[tuple[B, Literal[8], Literal[32], Literal[32]], shapetorch.float32]
    reveal_type(nn.Conv2d(3, 6, 3, groups=3)(one))  # N: Tensor[tuple[Literal[6], Literal[26], Literal[26]], shapetorch.float32]
    nn.Conv2d(4, 16, 3)(img)  # E: conv2d: given groups=1 and weight of shape (16, 4, 3, 3), expected input (B, 3, 32, 32) to have 4 channels, but got 3 channels instead  [conv_error_channels_mismatch]
    nn.Conv2d(3, 16, 40)(img)  # E: conv2d: padded input size per channel (32, 32) is smaller than the kernel (40, 40)  [conv_error_kernel_too_large]
    nn.Conv2d(3, 16, 3)(flat)  # E: conv2d: expected 3-D (unbatched) or 4-D (batched) input, but got input of shape (4, 100)  [conv_error_input_rank]
    nn.Conv2d(3, 16, 3)(seq)  # (Batch, 4, 100) unbatched: Batch against 3 channels cannot be decided
    reveal_type(nn.Conv1d(4, 8, 5, stride=5)(seq))  # N: Tensor[tuple[plugin_nn.Batch, Literal[8], Literal[20]], shapetorch.float32]
    reveal_type(nn.Conv1d(4, 8, 3).weight)  # N: shapetorch.nn.Parameter[Any, Any]


def embed_norm(tok: Tensor[tuple[B, L[12]], int64]) -> None:
    emb = nn.Embedding(1000, 64)
    reveal_type(emb)  # N: shapetorch.nn.Embedding[Literal[1000], Literal[64]]
    h = emb(tok)
    reveal_type(h)  # N: Tensor[tuple[B, Literal[12], Literal[64]], shapetorch.float32]
    reveal_type(nn.LayerNorm(64)(h))  # N: Tensor[tuple[B, Literal[12], Literal[64]], shapetorch.float32]
    reveal_type(nn.LayerNorm((12, 64))(h))  # N: Tensor[tuple[B, Literal[12], Literal[64]], shapetorch.float32]
    nn.LayerNorm(32)(h)  # E: layer_norm: expected input with shape (*, (32,)) but got input of shape (B, 12, 64)  [layer_norm_error_shape_mismatch]
    nn.RMSNorm([64])(h)
    reveal_type(nn.Flatten()(h))  # N: Tensor[tuple[B, Literal[768]], shapetorch.float32]
    reveal_type(nn.BatchNorm1d(12)(h))  # N: Tensor[tuple[B, Literal[12], Literal[64]], shapetorch.float32]
    nn.BatchNorm1d(64)(h)  # E: BatchNorm1d: expected input (B, 12, 64) to have 64 channels at dimension 1  [norm_error_channels_mismatch]
    nn.BatchNorm2d(12)(h)  # E: BatchNorm2d: expected 4D input (got 3D input)  [norm_error_input_rank]
    nn.BatchNorm1d(12)(h.unsqueeze(0))  # E: BatchNorm1d: expected 2D or 3D input (got 4D input)  [norm_error_input_rank]
    reveal_type(nn.Flatten(0, 1)(h))  # N: Tensor[tuple[Any, Literal[64]], shapetorch.float32]


def sequential(x: Tensor[tuple[B, L[784]], float32], img: Tensor[tuple[B, L[3], L[32], L[32]], float32]) -> None:
    mlp = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.1), nn.Linear(256, 10))
    reveal_type(mlp(x))  # N: Tensor[tuple[B, Literal[10]], shapetorch.float32]
    nn.Sequential(nn.Linear(784, 256), nn.GELU(), nn.Linear(128, 10))(x)  # E: (B, 256) @ (128, 10) (256 != 128)  [matmul_error_inner_dimensions_do_not_match]
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 10))
    reveal_type(cnn(img))  # N: Tensor[tuple[B, Literal[10]], shapetorch.float32]
    nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.Linear(8 * 32 * 32, 10))(img)  # E: (B, 7200) @ (8192, 10) (7200 != 8192)  [matmul_error_inner_dimensions_do_not_match]


def functional(x: Tensor[tuple[B, L[784]], float32], bad: Tensor[tuple[B, L[100]], float32],
               img: Tensor[tuple[B, L[3], L[32], L[32]], float32], tok: Tensor[tuple[B, L[12]], int64]) -> None:
    w = st.zeros(256, 784, dtype=float32)
    reveal_type(F.linear(x, w))  # N: Tensor[tuple[B, Literal[256]], shapetorch.float32]
    reveal_type(F.linear(x, w, st.zeros(256, dtype=float32)))  # N: Tensor[tuple[B, Literal[256]], shapetorch.float32]
    F.linear(bad, w)  # E: matmul: inner dimensions do not match: (B, 100) @ (784, 256) (100 != 784)  [matmul_error_inner_dimensions_do_not_match]
    k = st.zeros(16, 3, 3, 3, dtype=float32)
    reveal_type(F.conv2d(img, k, stride=2))  # N: Tensor[tuple[B, Literal[16], Literal[15], Literal[15]], shapetorch.float32]
    reveal_type(F.conv2d(img, k, padding=1))  # N: Tensor[tuple[B, Literal[16], Literal[32], Literal[32]], shapetorch.float32]
    F.conv2d(img, st.zeros(16, 4, 3, 3, dtype=float32))  # E: expected input (B, 3, 32, 32) to have 4 channels  [conv_error_channels_mismatch]
    reveal_type(F.embedding(tok, st.zeros(10, 5, dtype=float32)))  # N: Tensor[tuple[B, Literal[12], Literal[5]], shapetorch.float32]
    F.layer_norm(x, (100,))  # E: layer_norm: expected input with shape (*, (100,))  [layer_norm_error_shape_mismatch]
    reveal_type(F.relu(x))  # N: Tensor[tuple[B, Literal[784]], shapetorch.float32]
    reveal_type(F.softmax(x, dim=-1))  # N: Tensor[tuple[B, Literal[784]], shapetorch.float32]


class MLP(nn.Module):
    def __init__(self, hidden: int = 256) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(256, 10)
        self.drop = nn.Dropout(0.5)
        self.loose = nn.Linear(hidden, 10)

    def forward(self, x: Tensor[tuple[B, L[784]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        h = self.drop(F.relu(self.fc1(x)))
        return self.fc2(h)


class Broken(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: Tensor[tuple[B, L[784]], float32]) -> Tensor[tuple[B, L[10]], float32]:
        return self.fc2(self.fc1(x))  # E: (B, 256) @ (128, 10) (256 != 128)  [matmul_error_inner_dimensions_do_not_match]


def models(m: MLP, x: Tensor[tuple[L[32], L[784]], float32], bad: Tensor[tuple[L[32], L[100]], float32]) -> None:
    reveal_type(m(x))  # N: Tensor[tuple[Literal[32], Literal[10]], shapetorch.float32]
    m(bad)  # E: Argument 1 to "forward" of "MLP" has incompatible type  [arg-type]
    reveal_type(nn.Sequential(m, nn.ReLU())(x))  # N: Tensor[tuple[Literal[32], Literal[10]], shapetorch.float32]
    reveal_type(m.train().eval())  # N: plugin_nn.MLP
    for p in m.parameters():
        p.grad = None


PATCH: Final = 4
D_MODEL: Final = 32


def nested_calls(x: Tensor[tuple[B, L[784]], float32], img: Tensor[tuple[B, L[8], L[32], L[32]], float32]) -> None:
    fc1, fc2 = nn.Linear(784, 256), nn.Linear(128, 10)
    fc2(F.relu(fc1(x)))  # E: matmul: inner dimensions do not match: (B, 256) @ (128, 10) (256 != 128)  [matmul_error_inner_dimensions_do_not_match]
    reveal_type(nn.Linear(256, 10)(F.dropout(F.gelu(fc1(x)), 0.1)))  # N: Tensor[tuple[B, Literal[10]], shapetorch.float32]
    reveal_type(F.softmax(fc1(x), dim=-1))  # N: Tensor[tuple[B, Literal[256]], shapetorch.float32]
    conv = nn.Conv2d(8, 8, 3, padding=1)
    reveal_type(img + F.relu(conv(img)))  # N: Tensor[tuple[B, Literal[8], Literal[32], Literal[32]], shapetorch.float32]
    reveal_type(nn.Linear(PATCH * PATCH * 3, 2 * D_MODEL))  # N: shapetorch.nn.Linear[Literal[48], Literal[64]]
    reveal_type(st.zeros(1, PATCH + 1, D_MODEL // 4))  # N: Tensor[tuple[Literal[1], Literal[5], Literal[8]], shapetorch.float32]


def pooling(img: Tensor[tuple[B, L[8], L[32], L[32]], float32]) -> None:
    reveal_type(F.max_pool2d(img, 2))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(F.avg_pool2d(img, 3, stride=2, padding=1))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.float32]
    reveal_type(F.adaptive_avg_pool2d(img, 1))  # N: Tensor[tuple[B, Literal[8], Literal[1], Literal[1]], shapetorch.float32]
    F.max_pool2d(img, 4, padding=3)  # E: max_pool2d: pad should be at most half of the kernel size  [pool_error_invalid_padding]
    st.cat([F.max_pool2d(img, 2), img], dim=1)  # E: expected size 16 but got size 32  [cat_error_size_mismatch]


def dtype_kinds(i: Tensor[tuple[B, L[8], L[32], L[32]], int64],
                c: Tensor[tuple[B, L[8], L[32], L[32]], st.complex64]) -> None:
    # nn.functional's dtype kinds (shapetorch._rules.dtypes.DTYPE_KINDS): the runtime's refusals, in the editor
    F.adaptive_avg_pool2d(i, 1)  # E: adaptive_avg_pool2d: not implemented for dtype int64  [method_dtype_not_supported_error]
    nn.AdaptiveAvgPool2d(1)(c)  # E: adaptive_avg_pool2d: not implemented for dtype complex64  [method_dtype_not_supported_error]
    reveal_type(F.avg_pool2d(i, 2))  # N: Tensor[tuple[B, Literal[8], Literal[16], Literal[16]], shapetorch.int64]
    F.avg_pool2d(c, 2)  # E: avg_pool2d: not implemented for dtype complex64  [method_dtype_not_supported_error]
    F.mish(c)  # E: mish: not implemented for dtype complex64  [method_dtype_not_supported_error]
    F.layer_norm(i, (32,))  # E: layer_norm: not implemented for dtype int64  [method_dtype_not_supported_error]
    reveal_type(F.threshold(i, 0.5, 2.0))  # N: Tensor[tuple[B, Literal[8], Literal[32], Literal[32]], shapetorch.int64]
    F.threshold(c, 0.5, 2.0)  # E: threshold: not implemented for dtype complex64  [method_dtype_not_supported_error]


def redefinition(x: Tensor[tuple[B, L[10], L[32]], float32]) -> Tensor[tuple[B, L[4], L[10], L[8]], float32]:
    b = x.shape[0]
    x = x.reshape(b, 10, 4, 8)  # a name takes a new shape: no assignment error
    return x.transpose(1, 2)


def parameters(x: Tensor[tuple[B, L[5], L[16]], float32]) -> None:
    pos = nn.Parameter(st.zeros(1, 5, 16))
    reveal_type(x + pos)  # N: Tensor[tuple[B, Literal[5], Literal[16]], shapetorch.float32]
    x + nn.Parameter(st.zeros(1, 6, 16))  # E: add: shapes (B, 5, 16) and (1, 6, 16) cannot be broadcast: size 5 != 6 at dimension -2  [broadcast_error_incompatible_dimensions]
    reveal_type(pos.expand(2, -1, -1))  # N: Tensor[tuple[Literal[2], Literal[5], Literal[16]], shapetorch.float32]
    reveal_type(pos[0])  # N: Tensor[tuple[Literal[5], Literal[16]], shapetorch.float32]
