"""Forward-mode (jvp) rules of the primitives: ``PRIMS[name].jvp = rule``.

``rule(tangents, n)`` gets one tangent per primitive input (None where an input has none, or is not
a tensor) and ``n`` with the primal ``inputs``, the ``params`` and the ``out``put; it returns the
output's tangent, written in shapetorch ops. Broadcasting and the output dtype are fixed by the
caller (``forward_ad.propagate``). Linear primitives apply themselves to the tangent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .. import ops  # noqa: F401  (the primitives exist once the op modules are loaded)
from .._engine.primitives import PRIMS
from .._tensor import Tensor

Rule = Callable[[tuple[Any, ...], Any], Any]


def _z(t: Any, like: Any) -> Any:
    """The tangent, or zeros like the primal where there is none."""
    if t is not None:
        return t
    return like.new_zeros(like._data.shape) if isinstance(like, Tensor) else 0.0


def _sum(*terms: Any) -> Any:
    out = None
    for t in terms:
        if t is not None:
            out = t if out is None else out + t
    return out


def _times(t: Any, f: Callable[[], Any]) -> Any:
    return None if t is None else t * f()


def _unary(fn: Callable[[Any, Any], Any]) -> Rule:
    return lambda ts, n: None if ts[0] is None else fn(ts[0], n)


def _linear(name: str) -> Rule:
    """A primitive that is linear in its first (only differentiable) input: apply it to the tangent."""
    return lambda ts, n: None if ts[0] is None else PRIMS[name](ts[0], *n.inputs[1:], **n.params)


def _share(n: Any, first_wins: Any) -> tuple[Any, Any]:
    a, b = n.inputs
    w = first_wins.to(a.dtype) + (a == b).to(a.dtype) * 0.5
    return w, 1 - w


def _log(x: Any) -> Any:
    return x.log() if isinstance(x, Tensor) else math.log(x) if x > 0 else float("nan")


def _weighted(ts: tuple[Any, ...], ws: tuple[Any, Any]) -> Any:
    return _sum(*(None if t is None else t * w for t, w in zip(ts, ws)))


def _reduce_keep(t: Any, n: Any) -> Any:
    if n.params["keepdims"]:
        return t
    shape = n.inputs[0]._data.shape
    return t.reshape(tuple(1 if i in n.params["axis"] else s for i, s in enumerate(shape)))


def _extreme(ts: tuple[Any, ...], n: Any) -> Any:
    x, t = n.inputs[0], ts[0]
    mask = (x == _reduce_keep(n.out, n)).to(t.dtype)
    axis = list(n.params["axis"])
    return (t * mask).sum(dim=axis, keepdim=n.params["keepdims"]) / mask.sum(dim=axis, keepdim=n.params["keepdims"])


LN2, LN10 = math.log(2.0), math.log(10.0)

def _layer_norm_jvp(ts: tuple[Any, ...], n: Any) -> Any:
    x, p = n.inputs[0], n.params
    ax = list(range(x._data.ndim - p["nd"], x._data.ndim))
    rstd = (x.var(ax, keepdim=True, correction=0) + p["eps"]).rsqrt()
    hat = (x - x.mean(ax, keepdim=True)) * rstd
    w = n.inputs[1] if p["has_w"] else None
    out = None
    if ts[0] is not None:
        t = ts[0]
        out = rstd * (t - t.mean(ax, keepdim=True) - hat * (t * hat).mean(ax, keepdim=True))
        out = out * w if w is not None else out
    rest = ts[1:]
    return _sum(out, rest[0] * hat if w is not None and rest[0] is not None else None,
                rest[-1] if p["has_b"] and rest[-1] is not None else None)


RULES: dict[str, Rule] = {
    "neg": _unary(lambda t, n: -t),
    "exp": _unary(lambda t, n: t * n.out),
    "exp2": _unary(lambda t, n: t * n.out * LN2),
    "expm1": _unary(lambda t, n: t * (n.out + 1)),
    "log": _unary(lambda t, n: t / n.inputs[0]),
    "log2": _unary(lambda t, n: t / (n.inputs[0] * LN2)),
    "log10": _unary(lambda t, n: t / (n.inputs[0] * LN10)),
    "log1p": _unary(lambda t, n: t / (n.inputs[0] + 1)),
    "sqrt": _unary(lambda t, n: t / (2 * n.out)),
    "rsqrt": _unary(lambda t, n: t * -0.5 * n.out ** 3),
    "sin": _unary(lambda t, n: t * n.inputs[0].cos()),
    "cos": _unary(lambda t, n: -t * n.inputs[0].sin()),
    "tan": _unary(lambda t, n: t * (1 + n.out ** 2)),
    "asin": _unary(lambda t, n: t * (1 - n.inputs[0] ** 2).rsqrt()),
    "acos": _unary(lambda t, n: -t * (1 - n.inputs[0] ** 2).rsqrt()),
    "atan": _unary(lambda t, n: t / (1 + n.inputs[0] ** 2)),
    "sinh": _unary(lambda t, n: t * n.inputs[0].cosh()),
    "cosh": _unary(lambda t, n: t * n.inputs[0].sinh()),
    "tanh": _unary(lambda t, n: t * (1 - n.out ** 2)),
    "asinh": _unary(lambda t, n: t * (n.inputs[0] ** 2 + 1).rsqrt()),
    "acosh": _unary(lambda t, n: t * (n.inputs[0] ** 2 - 1).rsqrt()),
    "atanh": _unary(lambda t, n: t / (1 - n.inputs[0] ** 2)),
    "sigmoid": _unary(lambda t, n: t * n.out * (1 - n.out)),
    "reciprocal": _unary(lambda t, n: -t * n.out ** 2),
    "abs": _unary(lambda t, n: t * n.inputs[0].sgn() if not n.inputs[0].is_complex()
                  else ((n.inputs[0].conj() * t).real / n.out).to(n.out.dtype)),
    "frac": _unary(lambda t, n: t),
    "conj": _unary(lambda t, n: t.conj()),
    "clone": _unary(lambda t, n: t.clone()),
    "to_copy": _unary(lambda t, n: t.to(n.out.dtype)),
    "to_device": _unary(lambda t, n: t.to(n.out.device)),
    "add": lambda ts, n: _sum(ts[0], ts[1]),
    "sub": lambda ts, n: _sum(ts[0], None if ts[1] is None else -ts[1]),
    "mul": lambda ts, n: _sum(_times(ts[0], lambda: n.inputs[1]), _times(ts[1], lambda: n.inputs[0])),
    "true_divide": lambda ts, n: _sum(_times(ts[0], lambda: 1 / n.inputs[1]),
                                      _times(ts[1], lambda: -n.inputs[0] / n.inputs[1] ** 2)),
    "remainder": lambda ts, n: _sum(ts[0], _times(ts[1], lambda: -(n.inputs[0] / n.inputs[1]).floor())),
    "fmod": lambda ts, n: _sum(ts[0], _times(ts[1], lambda: -(n.inputs[0] / n.inputs[1]).trunc())),
    "pow": lambda ts, n: _sum(_times(ts[0], lambda: n.inputs[1] * n.inputs[0] ** (n.inputs[1] - 1)),
                              _times(ts[1], lambda: n.out * _log(n.inputs[0]))),
    "atan2": lambda ts, n: _sum(_times(ts[0], lambda: n.inputs[1] / (n.inputs[0] ** 2 + n.inputs[1] ** 2)),
                                _times(ts[1], lambda: -n.inputs[0] / (n.inputs[0] ** 2 + n.inputs[1] ** 2))),
    "maximum": lambda ts, n: _weighted(ts, _share(n, n.inputs[0] > n.inputs[1])),
    "minimum": lambda ts, n: _weighted(ts, _share(n, n.inputs[0] < n.inputs[1])),
    "where": lambda ts, n: None if ts[1] is None and ts[2] is None else PRIMS["where"](
        n.inputs[0], _z(ts[1], n.inputs[1]), _z(ts[2], n.inputs[2])),
    "matmul": lambda ts, n: _sum(None if ts[0] is None else ts[0] @ n.inputs[1],
                                 None if ts[1] is None else n.inputs[0] @ ts[1]),
    "cat": lambda ts, n: PRIMS["cat"](*(_z(t, x) for t, x in zip(ts, n.inputs)), **n.params),
    "gather": lambda ts, n: None if ts[0] is None else PRIMS["gather"](ts[0], n.inputs[1], **n.params),
    "scatter_add": lambda ts, n: PRIMS["scatter_add"](_z(ts[0], n.inputs[0]), n.inputs[1], _z(ts[2], n.inputs[2]),
                                                      **n.params),
    "scatter": lambda ts, n: PRIMS["scatter"](_z(ts[0], n.inputs[0]), n.inputs[1],
                                              _z(ts[2], n.inputs[2]) if isinstance(n.inputs[2], Tensor) else 0,
                                              **n.params),
    "index_put": lambda ts, n: PRIMS["index_put"](_z(ts[0], n.inputs[0]), _z(ts[1], n.inputs[1]), **n.params),
    "prod": _unary(lambda t, n: (t * _reduce_keep(n.out, n) / n.inputs[0]).sum(
        dim=list(n.params["axis"]), keepdim=n.params["keepdims"])),
    "amax": lambda ts, n: None if ts[0] is None else _extreme(ts, n),
    "amin": lambda ts, n: None if ts[0] is None else _extreme(ts, n),
}

def _bilinear(name: str) -> Rule:
    """A primitive linear in each of its two tensor inputs (convolution and its gradients)."""
    def rule(ts: tuple[Any, ...], n: Any) -> Any:
        prim = PRIMS[name]
        a, b = n.inputs[:2]
        return _sum(None if ts[0] is None else prim(ts[0], b, **n.params),
                    None if ts[1] is None else prim(a, ts[1], **n.params))

    return rule


_SQRT_HALF, _INV_SQRT_2PI = math.sqrt(0.5), 1.0 / math.sqrt(2.0 * math.pi)
# the primitives of the nn modules (present once shapetorch.nn's ops are loaded)
RULES.update({
    "relu": _unary(lambda t, n: t * (n.out > 0).to(t.dtype)),
    "erf": _unary(lambda t, n: t * (-(n.inputs[0] ** 2)).exp() * (2.0 / math.sqrt(math.pi))),
    "gelu": _unary(lambda t, n: t * (0.5 * (1 + PRIMS["erf"](n.inputs[0] * _SQRT_HALF))
                                     + n.inputs[0] * (n.inputs[0] ** 2 * -0.5).exp() * _INV_SQRT_2PI)),
    "softmax": _unary(lambda t, n: n.out * (t - (t * n.out).sum(n.params["axis"], keepdim=True))),
    "log_softmax": _unary(lambda t, n: t - (n.out.exp() * t).sum(n.params["axis"], keepdim=True)),
    "layer_norm": _layer_norm_jvp,
    "matmul_bias": lambda ts, n: _sum(None if ts[0] is None else ts[0] @ n.inputs[1],
                                      None if ts[1] is None else n.inputs[0] @ ts[1], ts[2]),
    "constant_pad_nd": _unary(lambda t, n: PRIMS["constant_pad_nd"](t, pads=n.params["pads"], value=0)),
    "convolution": _bilinear("convolution"),
    "convolution_input_grad": _bilinear("convolution_input_grad"),
    "convolution_weight_grad": _bilinear("convolution_weight_grad"),
})
for _name in ("sum", "reshape", "view", "permute", "expand", "diagonal", "diagonal_backward", "index_backward",
              "index", "select", "slice", "index_select", "take_along_dim", "put_along_dim_add"):
    RULES[_name] = _linear(_name)
for _name in ("sgn", "sign", "floor", "ceil", "trunc", "round", "floor_divide"):
    RULES[_name] = lambda ts, n: n.out.new_zeros(n.out._data.shape)

for _name, _rule in RULES.items():
    if _name in PRIMS:
        PRIMS[_name].jvp = _rule
