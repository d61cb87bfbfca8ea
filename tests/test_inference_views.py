"""Inference tensors and their views as torch's: a view of an inference tensor is one (made inside inference_mode
or after it, by any view op, ``.data`` and ``detach`` too), a view of a normal tensor is normal even when made
inside; an inference tensor or a view of one may not be saved for backward, nor written in place outside
inference_mode (grad mode on or off), nor asked for its version counter; inside inference_mode it may."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import shapetorch as st

_VIEWS: dict[str, Callable[[Any], Any]] = {
    "index": lambda t: t[0], "slice": lambda t: t[:, 1:], "view": lambda t: t.view(12), "t": lambda t: t.t(),
    "reshape": lambda t: t.reshape(2, 6), "unsqueeze": lambda t: t.unsqueeze(0), "expand": lambda t: t.expand(2, 3, 4),
    "detach": lambda t: t.detach(), "data": lambda t: t.data, "narrow": lambda t: t.narrow(1, 0, 2),
    "diagonal": lambda t: t.diagonal(), "real": lambda t: t.real, "select": lambda t: t.select(1, 2),
}


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        out = fn()
    except RuntimeError as e:
        return ("RuntimeError", str(e).split(".")[0])
    return out.tolist() if hasattr(out, "tolist") else out


@pytest.mark.parametrize("name", sorted(_VIEWS))
def test_views_of_inference_tensors_as_torch(name: str) -> None:
    view = _VIEWS[name]

    def run(lib: Any) -> list[Any]:
        with lib.inference_mode():
            x = lib.ones(3, 4)
            inside = view(x)
        normal = lib.ones(3, 4)
        with lib.inference_mode():
            of_normal = view(normal)
        outside = view(x)
        got: list[Any] = [inside.is_inference(), outside.is_inference(), of_normal.is_inference()]
        w = lib.ones((), requires_grad=True)
        got.append(_outcome(lambda: (outside * w).sum()))  # noqa: PLW0108 - the product saves it for backward
        got.append(_outcome(lambda: (of_normal * w).sum()))  # noqa: PLW0108
        if name not in ("expand", "diagonal", "real"):
            got.append(_outcome(lambda: outside.add_(1)))
            with lib.no_grad():
                got.append(_outcome(lambda: outside.mul_(2)))
            with lib.inference_mode():
                got.append(_outcome(lambda: outside.add_(1)))
            got.append(_outcome(lambda: of_normal.add_(1)))
        got.append(_outcome(lambda: outside._version))
        return got

    assert run(st) == run(torch)


def test_inplace_writes_into_inference_tensors_as_torch() -> None:
    def run(lib: Any) -> list[Any]:
        with lib.inference_mode():
            x = lib.arange(6.0).reshape(2, 3)
        out = []
        # (lambdas, not bound methods: x.t_() and x.unsqueeze_(0) change x in torch before refusing, and the later
        # calls must see the new x)
        for fn in (lambda: x.zero_(), lambda: x.__setitem__(0, 5.0), lambda: x.fill_(1.0),  # noqa: PLW0108
                   lambda: x.copy_(x * 2), lambda: x.t_(), lambda: x.unsqueeze_(0),  # noqa: PLW0108
                   lambda: x.resize_(6), lambda: x.requires_grad_(), lambda: x.clamp_(0, 1),  # noqa: PLW0108
                   lambda: lib.add(x, 1, out=x)):
            out.append(_outcome(fn))
        out.append(x.tolist())
        with lib.inference_mode():
            x.mul_(3)
            x[1] = 0.5
        out.append(x.tolist())
        out.append((x.clone() * lib.ones((), requires_grad=True)).requires_grad)  # a clone is a normal tensor
        return out

    assert run(st) == run(torch)
