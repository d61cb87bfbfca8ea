# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# pyright from the stubs alone (stubs/stubgen/render_pyright.py): literal sizes kept by factories and reshape,
# broadcasting checked per dim, x[:, i] and x[:, i] = v, cat keeping the dims it does not join, and layers
# whose literal sizes are checked (Conv channels, BatchNorm, LayerNorm) and reported once; and the overloads chosen
# by a literal dim (stubs/stubgen/render_dim_literals.py): transpose, permute, T, reductions, max/min, squeeze,
# unsqueeze, glu, gather, slices; size-keeping convolutions and recurrent layers of a literal configuration.
# Every `# pyright: ignore[...]` marks an error that MUST happen (reportUnnecessaryTypeIgnoreComment = error);
# every other line must check clean: the legal calls below are the ones the overloads must let through.
from typing import Any, Literal as L, TypeVar, assert_type

import shapetorch as st
import shapetorch.nn.functional as F
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
    assert_type(x[:, 1:3], Tensor[tuple[L[6], Any, L[8]], float32])  # a partial slice: its size needs the plugin
    assert_type(x[:4], Tensor[tuple[Any, L[10], L[8]], float32])
    assert_type(x[:, :, ::2], Tensor[tuple[L[6], L[10], Any], float32])
    assert_type(x.reshape(m, 5, 16), Tensor[tuple[Any, L[5], L[16]], float32])  # a leading size read from .shape
    assert_type(x.view(m, m, -1, 8), Tensor[tuple[Any, Any, Any, L[8]], float32])
    x.reshape(m, 6, 80) + x  # pyright: ignore[reportOperatorIssue]


def literal_dims(x: Tensor[tuple[B, L[4], L[10], L[16]], float32], m: Tensor[tuple[L[6], L[8]], float32],
                 one: Tensor[tuple[B, L[1], L[8]], float32], u: Tensor[tuple[Any, ...], float32],
                 t: Tensor[tuple[Any, L[4], L[16]], float32], d: int) -> None:
    # a dim counted from the front or the back, on any rank that has it
    assert_type(x.transpose(1, 2), Tensor[tuple[B, L[10], L[4], L[16]], float32])
    assert_type(x.transpose(-1, -2), Tensor[tuple[B, L[4], L[16], L[10]], float32])
    assert_type(t.transpose(1, 2), Tensor[tuple[Any, L[16], L[4]], float32])
    assert_type(x.permute(0, 2, 1, 3), Tensor[tuple[B, L[10], L[4], L[16]], float32])
    assert_type(x.permute(0, -1, 1, 2), Tensor[tuple[B, L[16], L[4], L[10]], float32])
    assert_type(m.T, Tensor[tuple[L[8], L[6]], float32])
    assert_type(x.sum(dim=1), Tensor[tuple[B, L[10], L[16]], float32])
    assert_type(x.mean(2, keepdim=True), Tensor[tuple[B, L[4], L[1], L[16]], float32])
    assert_type(st.amax(x, dim=-3), Tensor[tuple[B, L[10], L[16]], float32])
    assert_type(x.max(dim=1).values, Tensor[tuple[B, L[10], L[16]], float32])
    assert_type(x.min(-1, keepdim=True).indices, Tensor[tuple[B, L[4], L[10], L[1]], int64])
    assert_type(x.unsqueeze(2), Tensor[tuple[B, L[4], L[1], L[10], L[16]], float32])
    assert_type(x.unsqueeze(-2), Tensor[tuple[B, L[4], L[10], L[1], L[16]], float32])
    assert_type(one.squeeze(1), Tensor[tuple[B, L[8]], float32])
    assert_type(x.squeeze(1), Tensor[tuple[B, L[4], L[10], L[16]], float32])  # not a 1: kept, as torch
    assert_type(F.glu(x, dim=-1), Tensor[tuple[B, L[4], L[10], Any], float32])  # the half is arithmetic
    assert_type(x.gather(1, x.long()), Tensor[tuple[B, L[4], L[10], L[16]], float32])
    assert_type(st.gather(m, 0, m[:1].long()), Tensor[tuple[Any, L[8]], float32])
    # what needs the rank, a dim known only as an int, or an unknown rank: an unknown shape, never a made-up rank
    assert_type(x.transpose(1, -1), Tensor[tuple[Any, ...], float32])
    assert_type(x.transpose(d, 1), Tensor[tuple[Any, ...], float32])
    assert_type(x.sum(dim=d), Tensor[tuple[Any, ...], float32])
    assert_type(u.transpose(1, 2), Any)
    assert_type(u.permute(1, 0), Any)
    assert_type(u.sum(dim=1), Any)
    assert_type(u.T, Any)
    # illegal: the shapes the literal dims give are checked downstream
    m.T @ st.zeros(6, 3)
    m.T @ st.zeros(8, 3)  # pyright: ignore[reportOperatorIssue]
    x.transpose(1, 2) + x  # pyright: ignore[reportOperatorIssue]
    x.sum(dim=1) + m  # pyright: ignore[reportOperatorIssue]
    st.gather(x, 1, m.long())  # pyright: ignore[reportCallIssue, reportArgumentType]  -- the index's rank
    # Known limit: a permute that names too few dims takes the fallback (a dim list may be built at run time)
    assert_type(x.permute(0, 2, 1), Tensor[tuple[Any, ...], float32])


def joining(a: Tensor[tuple[L[4], L[8]], float32], b: Tensor[tuple[L[4], L[16]], float32],
            c: Tensor[tuple[L[1], L[4], L[7], L[16]], float32], d: Tensor[tuple[L[1], L[4], L[1], L[16]], float32],
            dim: int) -> None:
    assert_type(st.cat([a, b], dim=-1), Tensor[tuple[L[4], Any], float32])  # the joined dim is a sum: unknown
    assert_type(st.cat([c, d], dim=2), Tensor[tuple[L[1], L[4], Any, L[16]], float32])
    assert_type(st.cat([a, b], dim=dim), Tensor[tuple[Any, ...], float32])  # not a literal dim: never an error
    # cat([c, d], dim=1) fails at run time (7 != 1), but a dim known only as an int must be let through, so
    # pyright does not check it
    assert_type(st.cat([c, d], dim=1), Tensor[tuple[Any, ...], float32])


def joining_unknown_ranks(u: Tensor[tuple[Any, ...], Any], g: Tensor[tuple[L[1], L[2], L[3], L[4], L[5]], float32],
                          h: Any) -> None:
    # an unknown rank (a conv's or interpolate's result to pyright) or a rank above 4 gives an unknown shape,
    # never the rank of the first rank-specific overload it would match
    assert_type(st.cat([u, u], dim=1), Tensor[tuple[Any, ...], Any])
    assert_type(st.cat([h, u, h], dim=1), Tensor[tuple[Any, ...], Any])
    assert_type(st.cat([g, g], dim=1), Tensor[tuple[Any, ...], float32])


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


def size_keeping_layers(x: Tensor[tuple[B, L[32], L[16], L[16]], float32], seq: Tensor[tuple[B, L[8], L[100]], float32],
                        emb: Tensor[tuple[B, L[12], L[32]], float32]) -> None:
    # stride 1 with the padding that makes up for an odd kernel, or padding="same": the spatial sizes are kept
    assert_type(nn.Conv2d(32, 64, 3, padding=1)(x), Tensor[tuple[B, L[64], L[16], L[16]], float32])
    assert_type(nn.Conv1d(8, 16, 1)(seq), Tensor[tuple[B, L[16], L[100]], float32])
    assert_type(nn.Conv1d(8, 16, 5, padding="same")(seq), Tensor[tuple[B, L[16], L[100]], float32])
    assert_type(nn.Conv1d(8, 16, 3)(seq), Tensor[tuple[B, L[16], Any], float32])  # no padding: arithmetic
    conv: nn.Conv2d[L[32], L[64]] = nn.Conv2d(32, 64, 3, padding=1)  # still a Conv2d
    nn.Conv2d(16, 64, 3, padding=1)(x)  # pyright: ignore[reportCallIssue, reportArgumentType]
    # recurrent layers of a literal configuration: the input size, the initial state and the results' shapes
    enc = nn.GRU(32, 64, batch_first=True, bidirectional=True)
    out, h = enc(emb)
    assert_type(h, Tensor[tuple[L[2], B, L[64]], float32])
    assert_type(out, Tensor[tuple[B, L[12], Any], float32])  # 2 * 64 is arithmetic
    dec = nn.GRU(32, 64, batch_first=True)
    dec(emb, h)  # pyright: ignore[reportCallIssue, reportArgumentType]  -- two directions' state, one expected
    dec(emb, h[:1])
    lstm = nn.LSTM(32, 64, num_layers=2)
    assert_type(lstm(emb)[1][1], Tensor[tuple[L[2], L[12], L[64]], float32])  # not batch first: (T, N, H_in)
    nn.LSTM(16, 64)(emb)  # pyright: ignore[reportCallIssue, reportArgumentType]
