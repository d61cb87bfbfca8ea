"""static = runtime: the plugin's verdict on literal shapes equals what the runtime does.

Hypothesis draws a batch of expressions over tensors of literal shapes; they are rendered into one
typed file, type-checked by ONE mypy run with the plugin (``reveal_shape`` prints each result),
then executed with the runtime. For every case both must give the same shape and dtype, or the same
code. The machinery is ``tests/_static_runtime.py``, shared with the enumerated table
(``test_typing_static_table.py``).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from _static_runtime import decided, render, runtime_result, same, static_results

dims = st.integers(1, 3)
shapes = st.lists(dims, min_size=1, max_size=3).map(tuple)
dim_arg = st.integers(-4, 3)


@st.composite
def cases(draw: st.DrawFn) -> tuple[list[tuple[int, ...]], str]:
    """(operand shapes, expression over a, b)."""
    kind = draw(st.sampled_from(["matmul", "add", "mul", "reshape", "transpose", "sum", "unsqueeze", "squeeze",
                                 "cat", "stack", "permute", "index", "flatten", "mean", "where", "expand",
                                 "max", "topk", "flip", "roll", "repeat", "linear", "batchnorm", "add_",
                                 "norm", "triu", "one_hot", "max_pool1d", "avg_pool1d", "interpolate", "chunk",
                                 "recurrent", "pad", "pixel_shuffle", "upsample", "distance", "pool_layer",
                                 "conv_transpose"]))
    a = draw(shapes)
    if kind in ("matmul", "add", "mul", "cat", "stack", "where", "add_", "distance"):
        b = draw(st.one_of(shapes, st.just(a), st.just(a[-1:])))
        expr = {
            "matmul": "a @ b", "add": "a + b", "mul": "st.mul(a, b)",
            "cat": f"st.cat([a, b], dim={draw(dim_arg)})", "stack": f"st.stack([a, b], dim={draw(dim_arg)})",
            "where": "st.where(a > 0, a, b)", "add_": "a.add_(b)",
            "distance": draw(st.sampled_from([f"st.nn.CosineSimilarity({draw(dim_arg)})(a, b)",
                                              f"st.nn.PairwiseDistance(keepdim={draw(st.booleans())})(a, b)"])),
        }[kind]
        return [a, b], expr
    if kind == "reshape":
        n = 1
        for d in a:
            n *= d
        sizes = draw(st.sampled_from([[n], [-1], [n, 1], [1, -1], [2, -1], [3, -1], [-1, -1], [n + 1], [2, 3]]))
        return [a], f"a.reshape({', '.join(map(str, sizes))})"
    if kind == "transpose":
        return [a], f"a.transpose({draw(dim_arg)}, {draw(dim_arg)})"
    if kind in ("sum", "mean"):
        return [a], f"a.{kind}({draw(dim_arg)}, keepdim={draw(st.booleans())})"
    if kind == "unsqueeze":
        return [a], f"a.unsqueeze({draw(dim_arg)})"
    if kind == "squeeze":
        return [a], f"a.squeeze({draw(dim_arg)})"
    if kind == "permute":
        perm = draw(st.permutations(range(len(a))))
        if draw(st.booleans()):
            perm = perm[:-1]
        return [a], f"a.permute({', '.join(map(str, perm))})"
    if kind == "flatten":
        return [a], f"a.flatten({draw(dim_arg)})"
    if kind == "expand":
        return [a], f"a.expand({', '.join(str(draw(dims)) for _ in range(len(a) + draw(st.integers(0, 1))))})"
    if kind == "max":
        return [a], f"a.max({draw(dim_arg)}, keepdim={draw(st.booleans())}).values"
    if kind == "topk":
        return [a], f"a.topk({draw(st.integers(0, 4))}, dim={draw(dim_arg)}).values"
    if kind in ("flip", "roll"):
        return [a], f"a.flip({draw(dim_arg)})" if kind == "flip" else f"a.roll(1, {draw(dim_arg)})"
    if kind == "repeat":
        return [a], f"a.repeat({', '.join(str(draw(st.integers(1, 2))) for _ in range(max(1, len(a) + draw(st.integers(-1, 1)))))})"
    if kind == "linear":
        return [a], f"st.nn.Linear({draw(st.sampled_from([a[-1], a[-1] + 1]))}, 2)(a)"
    if kind == "recurrent":
        layer = draw(st.sampled_from(["LSTM", "GRU", "RNN"]))
        size = draw(st.sampled_from([a[-1], a[-1] + 1]))
        part = draw(st.sampled_from(["[0]", "[1][1]" if layer == "LSTM" else "[1]"]))  # output, c_n or h_n
        return [a], (f"st.nn.{layer}({size}, 2, {draw(st.integers(1, 2))}, batch_first={draw(st.booleans())}, "
                     f"bidirectional={draw(st.booleans())})(a){part}")
    if kind == "pad":
        mode, d = draw(st.sampled_from(["Zero", "Reflection", "Replication"])), draw(st.integers(1, 2))
        return [a], f"st.nn.{mode}Pad{d}d({draw(st.sampled_from(['1', '2', '(1, 0, 0, 1)', '(-1, 1)']))})(a)"
    if kind == "pixel_shuffle":
        return [a], f"st.nn.{draw(st.sampled_from(['PixelShuffle', 'PixelUnshuffle']))}({draw(st.integers(1, 2))})(a)"
    if kind == "upsample":
        arg = draw(st.sampled_from(["scale_factor=2", "scale_factor=1.5", "size=4", "size=(2, 3)"]))
        return [a], f"st.nn.Upsample({arg})(a)"
    if kind == "conv_transpose":  # the channels are a[-2]: (N, C, L) batched, (C, L) unbatched
        c = a[-2] if len(a) > 1 else 2
        geo = draw(st.sampled_from(["2", "3, stride=2, padding=1", "3, stride=2, padding=1, output_padding=1",
                                    "2, dilation=2", "1, output_padding=1", "3, padding=2"]))
        return [a], f"st.nn.ConvTranspose1d({draw(st.sampled_from([c, c + 1]))}, 2, {geo})(a)"
    if kind == "pool_layer":
        layer = draw(st.sampled_from(["MaxPool1d(2)", "AvgPool1d(2, stride=1)", "AdaptiveAvgPool1d(2)",
                                      "MaxPool2d(2, ceil_mode=True)", "AdaptiveMaxPool2d((1, 2))"]))
        return [a], f"st.nn.{layer}(a)"
    if kind == "batchnorm":
        c = a[1] if len(a) > 1 else 3
        return [a], f"st.nn.BatchNorm{draw(st.sampled_from([1, 2]))}d({draw(st.sampled_from([c, c + 1]))}).eval()(a)"
    if kind == "norm":
        return [a], f"a.norm({draw(st.sampled_from([1, 2]))}, dim={draw(dim_arg)}, keepdim={draw(st.booleans())})"
    if kind == "triu":
        return [a], f"a.triu({draw(st.integers(-1, 1))})"
    if kind == "one_hot":
        return [a], f"F.one_hot((a * 0).long(), {draw(st.integers(1, 3))})"
    if kind in ("max_pool1d", "avg_pool1d"):
        return [a], f"F.{kind}(a, {draw(st.integers(1, 2))})"
    if kind == "interpolate":
        arg = draw(st.sampled_from(["size=2", "size=(3,)", "scale_factor=2", "scale_factor=1.5", "scale_factor=0.5",
                                    "size=2, mode='nearest', align_corners=False", "size=(3, 4), mode='bicubic'",
                                    "size=2, mode='lanczos'", "size=2, mode='lanczos', antialias=True",
                                    "size=2, mode='bilinear', antialias=True", "scale_factor=2, mode='area'",
                                    "size=2, mode='cubic'"]))
        return [a], f"F.interpolate(a, {arg})"
    if kind == "chunk":
        return [a], f"a.chunk({draw(st.integers(1, 3))}, {draw(dim_arg)})[0]"
    idx = draw(st.lists(st.one_of(st.integers(-3, 3), st.just(":"), st.just("None"), st.just("1:"),
                                  st.just("...")), min_size=1, max_size=3))
    return [a], f"a[{', '.join(map(str, idx))}]"


@pytest.mark.filterwarnings("ignore:The recursion limit")
# No shrinking: each example is a batch of 60 cases checked by one mypy run, and the failure message already
# lists the mismatching cases; shrinking would rerun mypy for many minutes and gigabytes to report them.
@settings(max_examples=2, deadline=None, database=None, suppress_health_check=list(HealthCheck),
          phases=(Phase.explicit, Phase.generate))
@given(batch=st.lists(cases(), min_size=60, max_size=60))
def test_static_verdict_equals_runtime(batch: list[tuple[list[tuple[int, ...]], str]], tmp_path_factory: pytest.TempPathFactory) -> None:
    text, where = render(batch)
    path = tmp_path_factory.mktemp("static") / "static_cases.py"
    path.write_text(text)
    static = static_results(path, where)
    mismatches, compared = [], 0
    for i, (operands, expr) in enumerate(batch):
        got = static.get(i)
        rt = runtime_result(operands, expr)
        if not decided(got):
            continue  # the plugin did not decide this one (gradual): nothing to compare
        compared += 1
        assert got is not None
        if not same(got, rt):
            mismatches.append(f"{expr} with {operands}: static {got}, runtime {rt}")
    assert not mismatches, "\n".join(mismatches)
    assert compared >= len(batch) * 3 // 4, f"only {compared} of {len(batch)} cases were decided statically"
