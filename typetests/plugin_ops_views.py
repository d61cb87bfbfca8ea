# ruff: noqa  (typetests are expressions whose types are checked, not code to lint)
# reshape/view/unflatten with named dims (hooks/views.py, rule: _rules.views.reshape_shape). Element counts that
# are products of named dims and literals are compared with the common names cancelled: a mismatch is
# reported only when no sizes of the names could make it fit.
from typing import Any, Literal as L, TypeVar, reveal_type
import shapetorch as st
from shapetorch import Dim, Tensor, float32

class Batch(Dim): ...
class Time(Dim): ...
class Chan(Dim): ...

def f(wav: Tensor[tuple[Batch, L[16000]], float32], x: Tensor[tuple[Batch, Time, Chan], float32],
      h: Tensor[tuple[Batch, Time, L[8]], float32], n: int) -> None:
    b = wav.shape[0]
    B, T, C = x.shape
    reveal_type(wav.reshape(b, 100, 160))  # N: Tensor[tuple[plugin_ops_views.Batch, Literal[100], Literal[160]], shapetorch.float32]
    wav.reshape(b, 101, 160)  # E: reshape: shape [Batch, 101, 160] is invalid for input of shape (Batch, 16000) (Batch*16000 elements)  [reshape_error_size_mismatch]
    wav.view(b, -1, 161)  # E: view: shape [Batch, -1, 161] is invalid for input of shape (Batch, 16000) (Batch*16000 elements)  [reshape_error_size_mismatch]
    reveal_type(wav.reshape(b, -1, 160))  # N: Tensor[tuple[plugin_ops_views.Batch, Literal[100], Literal[160]], shapetorch.float32]
    reveal_type(x.reshape(B, T * C))  # N: Tensor[tuple[plugin_ops_views.Batch, Any], shapetorch.float32]
    reveal_type(x.reshape(B, -1))  # N: Tensor[tuple[plugin_ops_views.Batch, Any], shapetorch.float32]
    reveal_type(x.reshape(T, B, C))  # N: Tensor[tuple[plugin_ops_views.Time, plugin_ops_views.Batch, plugin_ops_views.Chan], shapetorch.float32]
    x.reshape(B, T, C, 2)  # E: reshape: shape [Batch, Time, Chan, 2] is invalid for input of shape (Batch, Time, Chan) (Batch*Chan*Time elements)  [reshape_error_size_mismatch]
    reveal_type(h.reshape(B, T, 2, 4))  # N: Tensor[tuple[plugin_ops_views.Batch, plugin_ops_views.Time, Literal[2], Literal[4]], shapetorch.float32]
    h.reshape(B, T, 3, 4)  # E: reshape: shape [Batch, Time, 3, 4] is invalid for input of shape (Batch, Time, 8) (Batch*Time*8 elements)  [reshape_error_size_mismatch]
    # undecidable, so not reported: 16000 may be Time * 160, and a named size may be a product of others
    reveal_type(wav.reshape(b, T, 160))  # N: Tensor[tuple[plugin_ops_views.Batch, plugin_ops_views.Time, Literal[160]], shapetorch.float32]
    reveal_type(x.reshape(B, C, 4, -1))  # N: Tensor[tuple[plugin_ops_views.Batch, plugin_ops_views.Chan, Literal[4], Any], shapetorch.float32]
    reveal_type(wav.reshape(n, 101, 160))  # N: Tensor[tuple[Any, Literal[101], Literal[160]], shapetorch.float32]
    reveal_type(h.unflatten(-1, (2, 4)))  # N: Tensor[tuple[plugin_ops_views.Batch, plugin_ops_views.Time, Literal[2], Literal[4]], shapetorch.float32]
    h.unflatten(-1, (3, 4))  # E: unflatten: sizes [3, 4] don't multiply up to the size 8 of dim -1 of (Batch, Time, 8)  [unflatten_error_size_mismatch]


def star_sizes_required(a: Tensor[tuple[L[2], L[3]], float32]) -> None:
    # torch's parser needs a value for these star parameters; none is the runtime's signature error
    a.reshape()  # E: reshape() missing 1 required positional arguments: "shape"  [argument_error_signature]
    a.view()  # E: view() missing 1 required positional arguments: "shape"  [argument_error_signature]
    a.permute()  # E: permute() missing 1 required positional arguments: "dims"  [argument_error_signature]
    a.expand()  # E: expand() missing 1 required positional arguments: "sizes"  [argument_error_signature]
    a.repeat()  # E: repeat() missing 1 required positional arguments: "repeats"  [argument_error_signature]
    st.rand()  # E: rand() missing 1 required positional arguments: "size"  [argument_error_signature]
    reveal_type(a[:1, :1].reshape(()))  # N: Tensor[tuple[()], shapetorch.float32]
