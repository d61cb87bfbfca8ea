# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# Dim names in a helper's signature are bound per call (rule: _rules.binding.bind_dims; hook: relax.py).
# A proven conflict is reported with both shapes, not as mypy's "Cannot infer value of type parameter";
# a literal against a named dim cannot be decided, so the call is accepted.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
import shapetorch.nn.functional as F
from shapetorch import Dim, Tensor, float32

B = TypeVar("B")
P = TypeVar("P")
D = TypeVar("D")

class Batch(Dim): ...
class Seq(Dim): ...

def attend(q: Tensor[tuple[B, P, D], float32], k: Tensor[tuple[B, P, D], float32]) -> Tensor[tuple[B, P, P], float32]:
    return q @ k.transpose(1, 2)

def mix(a: Tensor[tuple[B, D], float32], b: Tensor[tuple[B, D], float32], w: Tensor[tuple[D, D], float32]) -> Tensor[tuple[B, D], float32]:
    return (a + b) @ w

def f(x: Tensor[tuple[Batch, L[4], L[8]], float32], y: Tensor[tuple[Batch, L[5], L[8]], float32],
      z: Tensor[tuple[Batch, L[4], L[6]], float32], s: Tensor[tuple[Batch, Seq, L[8]], float32],
      t: Tensor[tuple[Seq, Batch, L[8]], float32], u: Tensor[Any, float32]) -> None:
    reveal_type(attend(x, x))  # N: Tensor[tuple[plugin_signatures.Batch, Literal[4], Literal[4]], shapetorch.float32]
    attend(x, y)  # E: attend: dim P is 4 in q (Batch, 4, 8) but 5 in k (Batch, 5, 8)  [call_error_dim_conflict]
    attend(x, z)  # E: attend: dim D is 8 in q (Batch, 4, 8) but 6 in k (Batch, 4, 6)  [call_error_dim_conflict]
    attend(s, t)  # E: attend: dim B is Batch in q (Batch, Seq, 8) but Seq in k (Seq, Batch, 8)  [call_error_dim_conflict]
    reveal_type(attend(x, s))  # N: Tensor[tuple[plugin_signatures.Batch, Any, Any], shapetorch.float32]
    reveal_type(attend(s, s))  # N: Tensor[tuple[plugin_signatures.Batch, plugin_signatures.Seq, plugin_signatures.Seq], shapetorch.float32]
    reveal_type(attend(x, u))  # N: Tensor[tuple[Any, Any, Any], shapetorch.float32]
    h = x[:, 0]
    mix(h, h, st.zeros(8, 8))
    mix(h, h, st.zeros(8, 4))  # E: mix: dim D is 8 in a (Batch, 8) but 4 in w (8, 4)  [call_error_dim_conflict]
    # a generic call as an argument (F.relu(x), st.exp(x)) is inferred from its own argument, not from the
    # callee's TypeVars: no false error, and a real conflict is still one
    reveal_type(attend(x, F.relu(x)))  # N: Tensor[tuple[plugin_signatures.Batch, Literal[4], Literal[4]], shapetorch.float32]
    attend(x, st.exp(x))
    attend(x, F.softplus(y))  # E: attend: dim P is 4 in q (Batch, 4, 8) but 5 in k (Batch, 5, 8)  [call_error_dim_conflict]

S = TypeVar("S", bound=tuple[Any, ...])

# a shape-generic helper: an op on a TypeVar-shaped tensor keeps the stub's S (or Any), not the rules' unknown
# tuple[Any, ...], which would not be S
def scaled(s: Tensor[S, float32]) -> Tensor[S, float32]:
    reveal_type(s.exp())  # N: Tensor[S, shapetorch.float32]
    reveal_type(st.sqrt(s))  # N: Tensor[S, shapetorch.float32]
    return s * 2.0 / st.sqrt(s + 1.0)
