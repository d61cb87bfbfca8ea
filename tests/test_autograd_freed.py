"""A second backward through a freed graph: torch's verdict, class and wording, and our code.

torch frees what its nodes saved after a backward without ``retain_graph`` (``create_graph`` implies retain),
and raises on a second backward through such a node, or on reading ``grad_fn._saved_*`` then. Nodes that
saved nothing (``(x + 1).sum()``) may run again. Each program below runs in both libraries; the registry-driven
test does the same for the first float32 OpInfo sample of every public function that torch differentiates.
"""

from __future__ import annotations

import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch

import _bad_input as fuzz
import shapetorch as st
from _opinfo_tables import to_st

FREED = "Trying to backward through the graph a second time"


def _verdict(lib: Any, prog: Callable[[Any], Any]) -> str:
    try:
        prog(lib)
    except RuntimeError as e:
        if lib is st:
            assert isinstance(e, st.AutogradError) and e.code == "autograd_error_graph_freed", repr(e)
        assert str(e).startswith(FREED), str(e)
        return "freed"
    return "ok"


def _mlp(lib: Any) -> Any:
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1))


def _custom(lib: Any, save: bool) -> Any:
    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            if save:
                ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            if save:
                (x,) = ctx.saved_tensors
            return g * 2

    return F


def _x(lib: Any) -> Any:
    return lib.tensor([0.5, 1.0, 2.0], requires_grad=True)


PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "mul twice": lambda L: [(y := (_x(L) * _x(L)).sum()).backward(), y.backward()],
    "add twice (nothing saved)": lambda L: [(y := (_x(L) + 1).sum()).backward(), y.backward()],
    "view, expand, cat twice": lambda L: [(y := L.cat([(x := _x(L)).view(3, 1).expand(3, 2).t().reshape(-1), x]).sum())
                                          .backward(), y.backward()],
    "mean twice": lambda L: [(y := _x(L).mean()).backward(), y.backward()],
    "times a Python number": lambda L: [(y := (_x(L) * 2).sum()).backward(), y.backward()],
    "divided by a Python number": lambda L: [(y := (_x(L) / 2).sum()).backward(), y.backward()],
    "minus a Python number": lambda L: [(y := (_x(L) - 2).sum()).backward(), y.backward()],
    "advanced index": lambda L: [(y := _x(L)[L.tensor([0, 2])].sum()).backward(), y.backward()],
    "basic slice": lambda L: [(y := _x(L)[1:].sum()).backward(), y.backward()],
    "retain then twice more": lambda L: [(y := _x(L).exp().sum()).backward(retain_graph=True), y.backward(),
                                         y.backward()],
    "retain then once more": lambda L: [(y := _x(L).exp().sum()).backward(retain_graph=True), y.backward()],
    "grad twice": lambda L: [x := _x(L), y := x.sin().sum(), L.autograd.grad(y, x), L.autograd.grad(y, x)],
    "grad with create_graph keeps the graph": lambda L: [x := _x(L), y := x.sin().sum(),
                                                         L.autograd.grad(y, x, create_graph=True), L.autograd.grad(y, x)],
    "create_graph=True but retain_graph=False": lambda L: [x := _x(L), y := x.sin().sum(),
                                                           L.autograd.grad(y, x, retain_graph=False, create_graph=True),
                                                           L.autograd.grad(y, x)],
    "saved result after backward": lambda L: [(y := _x(L).exp()).sum().backward(), y.grad_fn._saved_result],
    "saved self after backward": lambda L: [(y := _x(L).sin()).sum().backward(), y.grad_fn._saved_self],
    "saved self after a retained backward": lambda L: [(y := _x(L).sin()).sum().backward(retain_graph=True),
                                                       y.grad_fn._saved_self],
    "two roots sharing a node, one after the other": lambda L: [h := _x(L).sin(), (h * 2).sum().backward(),
                                                                (h * 3).sum().backward()],
    "two roots sharing a node that saved nothing": lambda L: [h := _x(L).exp(), (h + 2).sum().backward(),
                                                              (h - 3).sum().backward()],
    "two roots together, then one again": lambda L: [h := _x(L).sin(), a := (h * 2).sum(), b := (h * 3).sum(),
                                                     L.autograd.backward([a, b]), a.backward()],
    "backward with inputs, then the rest": lambda L: [x := _x(L), z := _x(L), y := (x * z).sum(),
                                                      y.backward(inputs=[x]), y.backward(inputs=[z])],
    "second order, then the second-order graph twice": lambda L: [
        x := _x(L), (g := L.autograd.grad((x ** 3).sum(), x, create_graph=True)[0]).sum().backward(),
        g.sum().backward()],
    "second order, then the first graph (retained by create_graph)": lambda L: [
        x := _x(L), y := (x ** 3).sum(), L.autograd.grad(y, x, create_graph=True)[0].sum().backward(),
        y.backward()],
    "custom Function with saved tensors": lambda L: [(y := _custom(L, True).apply(_x(L)).sum()).backward(),
                                                     y.backward()],
    "custom Function without saved tensors": lambda L: [(y := _custom(L, False).apply(_x(L)).sum()).backward(),
                                                        y.backward()],
    "an MLP's loss twice": lambda L: [(y := _mlp(L)(L.ones(2, 3)).sum()).backward(), y.backward()],
    "an MLP's loss, retained": lambda L: [(y := _mlp(L)(L.ones(2, 3)).sum()).backward(retain_graph=True), y.backward()],
    "cross_entropy twice": lambda L: [(y := L.nn.functional.cross_entropy(L.ones(2, 3, requires_grad=True),
                                                                          L.tensor([0, 2]))).backward(), y.backward()],
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_second_backward_verdict_matches_torch(name: str) -> None:
    assert _verdict(st, PROGRAMS[name]) == _verdict(torch, PROGRAMS[name])


def _twice(lib: Any, call: Callable[[], Any]) -> str | None:
    out = call()
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, (torch.Tensor, st.Tensor)) and o.requires_grad and o.dtype.is_floating_point]
    if not outs:
        return None
    loss = outs[0].sum()
    for o in outs[1:]:
        loss = loss + o.sum()
    loss.backward()
    try:
        loss.backward()
    except RuntimeError as e:
        if lib is st:
            assert isinstance(e, st.AutogradError) and e.code == "autograd_error_graph_freed", repr(e)
        assert str(e).startswith(FREED), str(e)
        return "freed"
    return "ok"


# Where a composite's primitives save what torch's single node does not (ours raises, torch runs again), or the
# other way round. A ratchet like tests/bad_input_baseline.json: a fixed entry fails the test until removed.
KNOWN = {
    "lerp": "ours: a composite whose `where` saves the condition; torch's LerpBackward saves only numbers",
    "normal": "ours: a composite that saves the noise; torch's NormalBackward saves nothing",
    "combinations": "ours: index_select of a 0-d input is a clone; torch's IndexSelectBackward saves the index",
    "bernoulli": "ours: the sample does not require grad; torch's does (with a zero gradient), so it backpropagates",
    "index_select": "ours: index_select of a 0-d input is a clone; torch's IndexSelectBackward saves the index",
    "put": "ours: index_put of the flattened input, whose backward needs no saved tensor; torch's PutBackward "
           "saves the index",
    "as_strided_scatter": "ours: an index_put composite that saves the positions; torch's node saves nothing",
    "fill": "ours: a `where` composite that saves the (all false) mask; torch's FillBackward0 saves nothing",
    "gradient": "ours: a composite of slices and divisions that saves the spacings; torch's nodes save nothing",
    "unfold_copy": "ours: unfold then a copy, whose unfold saves its positions; torch's node saves only sizes",
}


def _compare_all() -> tuple[dict[str, tuple[str, str]], int]:
    differ: dict[str, tuple[str, str]] = {}
    compared = 0
    for name in fuzz.names():
        op = fuzz._opinfos()[name]
        if not op.supports_autograd or torch.float32 not in op.supported_dtypes("cpu"):
            continue
        sample = next(iter(op.sample_inputs("cpu", torch.float32, requires_grad=True)), None)
        if sample is None:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                theirs = _twice(torch, lambda: getattr(torch, name)(sample.input, *sample.args, **sample.kwargs))
            except Exception:  # noqa: BLE001  torch refuses the sample's backward: nothing to compare
                continue
            leaves: dict[int, Any] = {}
            x, args, kwargs = to_st(sample.input, leaves), to_st(tuple(sample.args), leaves), to_st(
                dict(sample.kwargs), leaves)
            ours = _twice(st, lambda: getattr(st, name)(x, *args, **kwargs))
        if theirs is None:
            continue
        compared += 1
        if ours != theirs:
            differ[name] = (theirs, str(ours))
    return differ, compared


def test_second_backward_verdict_matches_torch_over_the_registry() -> None:
    differ, compared = _compare_all()
    assert compared >= 150, compared
    new = {k: v for k, v in differ.items() if k not in KNOWN}
    fixed = sorted(k for k in KNOWN if k not in differ)
    assert not new, f"second backward: (torch, ours) differ: {new}"
    assert not fixed, f"now agree with torch, remove from KNOWN: {fixed}"


def _mlp_step_memory(retain: bool) -> tuple[int, int]:
    """(peak, still held after backward) bytes traced over one forward and backward of an MLP on 4096 rows."""
    model = _mlp(st)
    x = st.randn(4096, 3)
    tracemalloc.start()
    loss = (model(x) ** 2).mean()
    loss.backward(retain_graph=retain)
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del loss
    return peak, current


def test_backward_frees_the_saved_tensors() -> None:
    """After a backward without retain_graph, what the graph saved is released while the loss still lives."""
    _mlp_step_memory(True)  # warm up: first-call allocations (caches, compiled guards) are not the graph's
    kept, freed = _mlp_step_memory(True)[1], _mlp_step_memory(False)[1]
    # the tanh's saved result, 4096 x 4 float32 (64 KiB), is gone (and the square's 4096 x 1 input)
    assert kept - freed >= 4096 * 4 * 4, (kept, freed)
