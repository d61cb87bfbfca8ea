"""Numerical gradient checks: ``gradcheck`` (first order) and ``gradgradcheck`` (second order).

Each compares the Jacobian from autograd (reverse mode; also forward mode with
``check_forward_ad``) with central finite differences, ``|a - n| <= atol + rtol * |n|``. Use float64.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._engine.backward import grad as _grad
from .._grad_mode import enable_grad, no_grad

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """A gradient check failed (torch's ``GradcheckError``)."""


def _tensor_type() -> type[Tensor]:
    from .._tensor import Tensor

    return Tensor


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _outputs(func: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[Tensor, ...]:
    Tensor = _tensor_type()
    return tuple(o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor))


def _numerical(func: Callable[..., Any], inputs: tuple[Any, ...], idx: list[int], eps: float) -> list[list[Any]]:
    """jac[i][o]: (numel(input i), numel(output o)) by central differences, perturbing the inputs in place."""
    with no_grad():
        outs = _outputs(func, inputs)
        jac = [[np.zeros((inputs[i].numel(), o.numel()), dtype=np.float64) for o in outs] for i in idx]
        for k, i in enumerate(idx):
            data = inputs[i]._data
            flat = data.reshape(-1) if data.flags.c_contiguous else None
            for j in range(inputs[i].numel()):
                pos = np.unravel_index(j, data.shape) if data.ndim else ()
                orig = data[pos].copy() if flat is None else flat[j].copy()
                data[pos] = orig - eps
                lo = [np.asarray(o.detach().numpy(), dtype=np.float64).copy() for o in _outputs(func, inputs)]
                data[pos] = orig + eps
                hi = [np.asarray(o.detach().numpy(), dtype=np.float64).copy() for o in _outputs(func, inputs)]
                data[pos] = orig
                for o in range(len(outs)):
                    jac[k][o][j] = ((hi[o] - lo[o]) / (2 * eps)).reshape(-1)
    return jac


def _analytical(func: Callable[..., Any], inputs: tuple[Any, ...], idx: list[int]) -> list[list[Any]]:
    from ..ops.creation import zeros_like

    with enable_grad():
        outs = _outputs(func, inputs)
        jac = [[np.zeros((inputs[i].numel(), o.numel()), dtype=np.float64) for o in outs] for i in idx]
        for o, out in enumerate(outs):
            if not out.requires_grad:
                continue
            for j in range(out.numel()):
                g = zeros_like(out)
                g.reshape(-1)[j] = 1.0
                grads = _grad((out,), [inputs[i] for i in idx], (g,), retain_graph=True, allow_unused=True)
                for k, gi in enumerate(grads):
                    if gi is not None:
                        jac[k][o][:, j] = np.asarray(gi.detach().numpy(), dtype=np.float64).reshape(-1)
    return jac


def _forward_analytical(func: Callable[..., Any], inputs: tuple[Any, ...], idx: list[int]) -> list[list[Any]]:
    from ..ops.creation import zeros_like
    from . import forward_ad as fwAD

    with no_grad():
        n_out = len(_outputs(func, inputs))
        outs = _outputs(func, inputs)
    jac = [[np.zeros((inputs[i].numel(), outs[o].numel()), dtype=np.float64) for o in range(n_out)] for i in idx]
    for k, i in enumerate(idx):
        for j in range(inputs[i].numel()):
            with fwAD.dual_level():
                t = zeros_like(inputs[i])
                t.reshape(-1)[j] = 1.0
                dual = list(inputs)
                dual[i] = fwAD.make_dual(inputs[i].detach(), t)
                for o, out in enumerate(_outputs(func, tuple(dual))):
                    tangent = fwAD.unpack_dual(out).tangent
                    if tangent is not None:
                        jac[k][o][j] = np.asarray(tangent.detach().numpy(), dtype=np.float64).reshape(-1)
    return jac


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(
    func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
    raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None,
) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against finite differences; True when they agree."""
    Tensor = _tensor_type()
    ins = _as_tuple(inputs)
    idx = [i for i, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them have "
                         "requires_grad=True.")
    for i in idx:
        if ins[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(
                f"Input #{i} requires gradient and is not a double precision floating point or complex. This check will "
                "likely fail if all the inputs are not of double precision floating point or complex. ",
                UserWarning, stacklevel=2,
            )
        if ins[i].is_complex():
            raise NotImplementedError("gradcheck: complex inputs are not supported by shapetorch's gradcheck")
    numerical = _numerical(func, ins, idx, eps)
    checks: list[tuple[str, list[list[Any]]]] = []
    if check_backward_ad:
        checks.append(("", _analytical(func, ins, idx)))
    if check_forward_ad:
        checks.append(("forward AD ", _forward_analytical(func, ins, idx)))
    for kind, analytical in checks:
        for k, i in enumerate(idx):
            for o in range(len(numerical[k])):
                a, n = analytical[k][o], numerical[k][o]
                if a.shape != n.shape or not np.allclose(a, n, rtol=rtol, atol=atol):
                    return _fail(
                        f"Jacobian mismatch for output {o} with respect to input {i},\n"
                        f"numerical:{n.tolist()!r}\n{kind}analytical:{a.tolist()!r}\n", raise_exception)
    if check_backward_ad and nondet_tol == 0.0:
        again = _analytical(func, ins, idx)
        first = checks[0][1]
        for k in range(len(idx)):
            for o in range(len(first[k])):
                if not np.array_equal(first[k][o], again[k][o]):
                    return _fail("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 "numerical gradient.", raise_exception)
    return True


def gradgradcheck(
    func: Callable[..., Any], inputs: Any, grad_outputs: Sequence[Tensor] | Tensor | None = None, *,
    eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False, check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False,
) -> bool:
    """Check second-order gradients: ``gradcheck`` of the map (inputs, grad_outputs) -> first-order gradients."""
    from ..ops.creation import tensor

    Tensor = _tensor_type()
    ins = _as_tuple(inputs)
    with no_grad():
        outs = _outputs(func, ins)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        gos = tuple(tensor(rng.standard_normal(o.shape), dtype=o.dtype, requires_grad=True) for o in outs)
    else:
        gos = _as_tuple(grad_outputs)
    n_in = len(ins)
    diff = [i for i, t in enumerate(ins) if isinstance(t, Tensor) and t.requires_grad]

    def new_func(*args: Any) -> tuple[Any, ...]:
        real_in, gouts = args[:n_in], args[n_in:]
        # grad mode on even where gradcheck's finite differences turn it off: without a graph there would be
        # no first-order gradients, nothing to compare, and every second derivative would pass
        with enable_grad():
            outputs = list(_outputs(func, real_in))
            pairs = [(o, g) for o, g in zip(outputs, gouts) if o.requires_grad]
            grads = _grad([o for o, _ in pairs], [real_in[i] for i in diff], [g for _, g in pairs],
                          create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, ins + tuple(gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode)
