"""``shapetorch.special``: the functions of ``torch.special``, by their torch names.

Those torch also has at the top level are the same ops (``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``,
``psi`` is ``digamma``, ``multigammaln`` is ``mvlgamma``); the others are registered in the op table as
``special_<name>``, as ATen names them. Values come from scipy.special's ufuncs (loaded on first use) or from the
kernels of :mod:`shapetorch.ops.special`; gradients wherever torch has them.
"""

from __future__ import annotations

from typing import Any

from .ops._registry import FUNCTIONS

# torch.special's name -> the op it is
_SAME = {
    "expit": "sigmoid", "logit": "logit", "erf": "erf", "erfc": "erfc", "erfinv": "erfinv", "gammaln": "lgamma",
    "digamma": "digamma", "psi": "digamma", "polygamma": "polygamma", "multigammaln": "mvlgamma", "i0": "i0",
    "log1p": "log1p", "expm1": "expm1", "exp2": "exp2", "xlogy": "xlogy", "sinc": "sinc", "round": "round",
    "softmax": "softmax", "log_softmax": "log_softmax", "logsumexp": "logsumexp",
}
_OWN = [name.removeprefix("special_") for name in FUNCTIONS if name.startswith("special_")]

__all__ = sorted([*_SAME, *_OWN])  # noqa: PLE0605  (the table's special_* ops)


def __getattr__(name: str) -> Any:
    if name in _SAME:
        return FUNCTIONS[_SAME[name]]
    if name in _OWN:
        return FUNCTIONS["special_" + name]
    raise AttributeError(f"module 'shapetorch.special' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
