# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# pyright from the stubs alone (stubs/stubgen/render_pyright.py): literal sizes kept by factories and reshape,
# broadcasting checked per dim, x[:, i] and x[:, i] = v, cat keeping the dims it does not join, and layers
# whose literal sizes are checked (Conv channels, BatchNorm, LayerNorm) and reported once.
# Every `# pyright: ignore[...]` marks an error that MUST happen (reportUnnecessaryTypeIgnoreComment = error);
# every other line must check clean: the legal calls below are the ones the overloads must let through.
from typing import Any, Literal as L, TypeVar, assert_type

import shapetorch as st
from shapetorch import Dim, Tensor, bool_, float32, float64, int64, nn

B = TypeVar("B")


class Batch(Dim): ...


def factories(n: int) -> None:
    assert_type(st.zeros(2, 3), Tensor[tuple[L[2], L[3]], float32])
    assert_type(st.randn(4, 5, 6, 7, dtype=float64), Tensor[tuple[L[4], L[5], L[6], L[7]], float64])
    assert_type(st.ones(5001), Tensor[tuple[Any], float32])  # 5001 is not in LITERAL_SIZES: Any
    assert_type(st.zeros(n, 3), Tensor[tuple[Any, Any], float32])  # a size known only as an int: Any sizes
    assert_type(st.zeros(1, 2, 3, 4, 5), Tensor[tuple[Any, ...], float32])


def broadcasting(x: Tensor[tuple[L[6], L[8]], float32], col: Tensor[tuple[L[6], L[1]], float32],
                 row: Tensor[tuple[L[1], L[8]], float32], v: Tensor[tuple[L[8]], float32],
                 bad: Tensor[tuple[L[3]], float32], i: Tensor[tuple[L[6], L[8]], int64],
                 a3: Tensor[tuple[L[2], L[1], L[5]], float32], b3: Tensor[tuple[L[1], L[4], L[5]], float32],
                 c3: Tensor[tuple[L[1], L[4], L[6]], float32], scalar: Tensor[tuple[()], float32]) -> None:
    assert_type(x + v, Tensor[tuple[L[6], L[8]], float32])
    assert_type(x * row, Tensor[tuple[L[6], L[8]], Any])  # a broadcast result: the dtype is the plugin's
    assert_type(col + row, Tensor[tuple[L[6], L[8]], Any])
    assert_type(v + x, Tensor[tuple[L[6], L[8]], Any])
    assert_type(a3 - b3, Tensor[tuple[L[2], L[4], L[5]], Any])
    assert_type(x + scalar, Tensor[tuple[L[6], L[8]], Any])
    assert_type(x + 1.5, Tensor[tuple[L[6], L[8]], float32])
    assert_type(2.0 * x, Tensor[tuple[L[6], L[8]], float32])
    assert_type(x < row, Tensor[tuple[L[6], L[8]], bool_])
    assert_type(i + x, Tensor[tuple[L[6], L[8]], Any])  # int64 + float32: the promotion is the plugin's
    assert_type(x.add(row), Tensor[tuple[L[6], L[8]], Any])
    x + bad  # pyright: ignore[reportOperatorIssue]
    bad * x  # pyright: ignore[reportOperatorIssue]
    a3 + c3  # pyright: ignore[reportOperatorIssue]
    x < bad  # pyright: ignore[reportOperatorIssue]
    x.add(bad)  # pyright: ignore[reportCallIssue, reportArgumentType]
    st.sub(x, bad)  # module functions are not checked (see render_overloads._fallback): no error, Any shape
    assert_type(st.sub(x, bad), Tensor[tuple[Any, ...], Any])


def broadcasting_unknowns(x: Tensor[tuple[L[6], L[8]], float32], u: Tensor[tuple[Any, ...], float32],
                          a: Tensor[tuple[L[6], Any], float32], t: Tensor[tuple[Any, L[3]], float32],
                          big: Tensor[tuple[L[1], L[2], L[3], L[4], L[5]], float32],
                          big2: Tensor[tuple[L[9], L[2], L[3], L[4], L[5]], float32],
                          g: Tensor[tuple[B, L[8]], float32], h: Tensor[tuple[B, L[1]], float32],
                          n: Tensor[tuple[Batch, L[8]], float32]) -> None:
    u + x  # an unknown rank: never an error
    x + u
    a + t  # Any sizes: never an error
    big + big2  # ranks above 4 are not spelled out: accepted
    assert_type(g + h, Tensor[tuple[B, L[8]], Any])  # the same TypeVar, or a 1, broadcasts
    assert_type(n * x[0], Tensor[tuple[Batch, L[8]], float32])  # a bias add keeps the dtype
    # Known limit: a TypeVar or a named dim against a different literal size in one position is a mismatch
    # to pyright (the plugin accepts it: it cannot be decided), as it already is for matmul and Linear.
    g + x  # pyright: ignore[reportOperatorIssue]


def views(x: Tensor[tuple[L[6], L[10], L[8]], float32], m: int) -> None:
    assert_type(x.reshape(60, 8), Tensor[tuple[L[60], L[8]], float32])
    assert_type(x.reshape(-1, 4, 4), Tensor[tuple[Any, L[4], L[4]], float32])  # -1 is a quotient: unknown
    assert_type(x.view(6, -1), Tensor[tuple[L[6], Any], float32])
    assert_type(x.reshape(m, -1), Tensor[tuple[Any, Any], float32])
    assert_type(x[:, 0], Tensor[tuple[L[6], L[8]], float32])
    assert_type(x[:, :, 0], Tensor[tuple[L[6], L[10]], float32])
    assert_type(x[:, 1:3], Tensor[tuple[Any, ...], float32])  # a partial slice: its size needs the plugin


def joining(a: Tensor[tuple[L[4], L[8]], float32], b: Tensor[tuple[L[4], L[16]], float32],
            c: Tensor[tuple[L[1], L[4], L[7], L[16]], float32], d: Tensor[tuple[L[1], L[4], L[1], L[16]], float32],
            dim: int) -> None:
    assert_type(st.cat([a, b], dim=-1), Tensor[tuple[L[4], Any], float32])  # the joined dim is a sum: unknown
    assert_type(st.cat([c, d], dim=2), Tensor[tuple[L[1], L[4], Any, L[16]], float32])
    assert_type(st.cat([a, b], dim=dim), Tensor[tuple[Any, ...], float32])  # not a literal dim: never an error
    # cat([c, d], dim=1) fails at run time (7 != 1), but a dim known only as an int must be let through, so
    # pyright does not check it
    assert_type(st.cat([c, d], dim=1), Tensor[tuple[Any, ...], float32])


def writes(out: Tensor[tuple[L[4], L[5], L[8]], float32], h: Tensor[tuple[L[4], L[8]], float32],
           wide: Tensor[tuple[L[4], L[16]], float32], v: Tensor[tuple[L[8]], float32], t: int) -> None:
    out[:, t] = h
    out[:, t] = v  # broadcasts into the slot
    out[:, t] = 0.0
    out[:, t] = wide  # pyright: ignore[reportCallIssue, reportArgumentType]
    out[0] = wide  # other indices take any value (the plugin checks them)
    out[:, 1:3] = wide
    out[..., 0] = wide


def layers(x: Tensor[tuple[B, L[32], L[16], L[16]], float32], tokens: Tensor[tuple[B, L[10], L[64]], float32]) -> None:
    conv = nn.Conv2d(32, 64, 3, stride=2, padding=1)
    assert_type(conv, nn.Conv2d[L[32], L[64], Any])
    h = conv(x)
    assert_type(h, Tensor[tuple[B, L[64], Any, Any], float32])  # channels kept; the kernel's arithmetic: plugin
    assert_type(nn.BatchNorm2d(64)(h), Tensor[tuple[B, L[64], Any, Any], float32])
    bad = nn.BatchNorm2d(32)(h)  # pyright: ignore[reportCallIssue, reportArgumentType]
    bad + h  # a failed call is Unknown to pyright: the same bug is not reported again
    nn.BatchNorm2d(64)(tokens)  # pyright: ignore[reportCallIssue, reportArgumentType]  -- 3-D input
    conv(tokens)  # pyright: ignore[reportCallIssue, reportArgumentType]
    assert_type(nn.LayerNorm(64)(tokens), Tensor[tuple[B, L[10], L[64]], float32])
    y = nn.LayerNorm(128)(tokens)  # pyright: ignore[reportCallIssue, reportArgumentType]
    nn.Linear(128, 64)(y)  # Unknown after the failed call: no second report
    nn.LayerNorm([10, 64])(tokens)  # a normalized shape from a list: Any, not checked
    z = nn.Linear(32, 16)(tokens)  # pyright: ignore[reportCallIssue, reportArgumentType]
    z + tokens
