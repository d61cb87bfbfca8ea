"""The functional higher-level API (``shapetorch.autograd.functional``): jacobian, hessian, vjp, jvp,
vhp, hvp of functions that take and return tensors, as torch's (reverse mode throughout; ``jvp`` by
the double-backward trick; ``vectorize`` is accepted and computes the same thing row by row).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._engine.backward import grad as _grad
from .._grad_mode import enable_grad
from . import forward_ad

if TYPE_CHECKING:
    from .._tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _is_tensor(x: object) -> bool:
    from .._tensor import Tensor

    return isinstance(x, Tensor)


def _as_tuple(inp: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Any, ...]]:
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not _is_tensor(el):
            if is_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but"
                                f" the value at index {i} has type {type(el).__name__}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
                            f" given {arg_name} has type {type(el).__name__}.")
    return is_tuple, tuple(inp)


def _tuple_postprocess(res: Any, to_unpack: Any) -> Any:
    if isinstance(to_unpack, tuple):
        assert len(to_unpack) == 2
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool) -> tuple[Tensor, ...]:
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        elif create_graph and need_graph and inp._fw_grads:  # (inside a forward-mode transform: jacfwd of jacrev)
            res.append(forward_ad.detach_keeping_tangents(inp, requires_grad=True))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs: Any, create_graph: bool) -> Any:
    if _is_tensor(inputs[0]):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs: tuple[Any, ...], input_type: str, strict: bool) -> None:
    if not strict:
        return
    if input_type not in ("outputs", "grad_inputs", "jacobian", "hessian"):
        raise RuntimeError("Invalid input_type to _check_requires_grad")
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should "
                                   "ensure that your function is thrice differentiable and that the hessian "
                                   "depends on the inputs.")
            if input_type == "jacobian":
                raise RuntimeError(f"While computing the hessian, found that the jacobian of the user-provided "
                                   f"function with respect to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs (this would be "
                                   "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs: tuple[Any, ...], inputs: tuple[Tensor, ...], grad_outputs: tuple[Any, ...] | None = None,
                   create_graph: bool = False, retain_graph: bool | None = None) -> tuple[Any, ...]:
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = [], []
    for out, g in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs.append(out)
            new_grad_outputs.append(g)
    if not new_outputs:
        return (None,) * len(inputs)
    return _grad(new_outputs, inputs, new_grad_outputs, allow_unused=True, create_graph=create_graph,
                 retain_graph=retain_graph)


def _fill_in_zeros(grads: tuple[Any, ...], refs: tuple[Tensor, ...], strict: bool, create_graph: bool,
                   stage: str) -> tuple[Tensor, ...]:
    from ..ops.creation import zeros_like

    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This "
                                       "is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i} in the "
                                       "grad_outputs when using the double backward trick to compute forward mode "
                                       "gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent of entry {i} in the "
                                   "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                                   "double backward trick to replace forward mode AD.")
            g = zeros_like(refs[i])
        res.append(g)
    return tuple(res)


def _run_with_v(func: Callable[..., Any], inputs: Any, v: Any, create_graph: bool, strict: bool,
                name: str) -> tuple[bool, tuple[Tensor, ...], Any, bool, tuple[Any, ...]]:
    """What jvp, vhp and hvp share: inputs and v made ready (v shaped like the inputs), then func run."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                           "single Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs


def _require_scalar(outputs: tuple[Any, ...], is_tuple: bool, name: str) -> None:
    """hessian, vhp and hvp take functions with a single one-element Tensor output."""
    if is_tuple or not _is_tensor(outputs[0]):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")


def _scalar_gradient(outputs: tuple[Any, ...], is_tuple: bool, inputs: tuple[Tensor, ...], strict: bool,
                     name: str) -> tuple[Any, ...]:
    """vhp and hvp: the gradient of the scalar output, kept differentiable for the second pass."""
    _require_scalar(outputs, is_tuple, name)
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return jac


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    with enable_grad():
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    result = _grad_postprocess(result, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(result, is_inputs_tuple)


def jvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward trick."""
    from ..ops.creation import zeros_like

    with enable_grad():
        _, inputs, v, is_outputs_tuple, outputs = _run_with_v(func, inputs, v, create_graph, strict, "jvp")
        grad_outputs = tuple(zeros_like(out).requires_grad_(True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    if create_graph:
        with enable_grad():
            grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
            jvp_res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    else:
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        jvp_res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    jvp_res = _grad_postprocess(jvp_res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(jvp_res, is_outputs_tuple)


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``output[i].shape + input[j].shape``."""
    from ..ops.creation import zeros
    from ..ops.joining import stack

    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                                      'mode"` are not supported together (yet). Please either set `create_graph=False`'
                                      ' or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        jacobian_rows: list[tuple[Any, ...]] = []
        for i, out in enumerate(outputs):
            flat = out.reshape(-1)
            rows: list[list[Tensor]] = [[] for _ in inputs]
            for j in range(flat.nelement()):
                vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for el_idx, (jac_el, vj_el, inp_el) in enumerate(zip(rows, vj, inputs)):
                    if vj_el is not None:
                        if strict and create_graph and not vj_el.requires_grad:
                            raise RuntimeError("The jacobian of the user-provided function is independent of input "
                                               f"{i}. This is not allowed in strict mode when create_graph=True.")
                        jac_el.append(vj_el)
                    else:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{el_idx}. This is not allowed in strict mode.")
                        jac_el.append(zeros(inp_el.shape, dtype=inp_el.dtype))
            jacobian_rows.append(tuple(
                (stack(r) if r else zeros((0,) + tuple(inp.shape), dtype=inp.dtype)).reshape(
                    tuple(out.shape) + tuple(inp.shape)) for r, inp in zip(rows, inputs)))
        res = _grad_postprocess(tuple(jacobian_rows), create_graph)
        return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def _jacfwd(func: Callable[..., Any], inputs: Any, strict: bool) -> Any:
    from ..ops.creation import zeros
    from ..ops.joining import stack
    from . import forward_ad as fwAD

    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are not "
                           "supported together (yet). Please either set `strict=False` or `strategy=\"reverse-mode\"`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    cols: list[list[list[Tensor]]] | None = None
    outputs: tuple[Any, ...] = ()
    is_outputs_tuple = False
    for j, inp in enumerate(inputs):
        for k in range(inp.nelement()):
            with fwAD.dual_level():
                duals = []
                for jj, other in enumerate(inputs):
                    tangent = zeros(other.shape, dtype=other.dtype)
                    if jj == j:
                        tangent.reshape(-1)[k] = 1.0
                    duals.append(fwAD.make_dual(other.detach(), tangent))
                out = func(*duals)
                is_outputs_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", "jacobian")
                if cols is None:
                    cols = [[[] for _ in inputs] for _ in outputs]
                for i, o in enumerate(outputs):
                    t = fwAD.unpack_dual(o).tangent
                    cols[i][j].append(zeros(o.shape, dtype=o.dtype) if t is None else t.detach())
    assert cols is not None
    res = tuple(
        tuple(stack(cols[i][j], dim=-1).reshape(tuple(o.shape) + tuple(inp.shape)) for j, inp in enumerate(inputs))
        for i, o in enumerate(outputs)
    )
    return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: ``H[i][j]`` has shape ``input[i].shape + input[j].shape``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp: Any) -> Any:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        _require_scalar(t_out, is_out_tuple, "hessian")
        return out.squeeze()

    def jac_func(*inp: Any) -> Any:
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy="reverse-mode")
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)`` for a scalar function."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _run_with_v(func, inputs, v, create_graph, strict,
                                                                             "vhp")
        jac = _scalar_gradient(outputs, is_outputs_tuple, inputs, strict, "vhp")
    with enable_grad():
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        vhp_res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    vhp_res = _grad_postprocess(vhp_res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(vhp_res, is_inputs_tuple)


def hvp(func: Callable[..., Any], inputs: Any, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)`` for a scalar function, by the double-backward trick."""
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs = _run_with_v(func, inputs, v, create_graph, strict,
                                                                             "hvp")
        jac = _scalar_gradient(outputs, is_outputs_tuple, inputs, strict, "hvp")
        grad_jac = tuple(zeros_like(inp).requires_grad_(True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with enable_grad():
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        hvp_res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    hvp_res = _grad_postprocess(hvp_res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(hvp_res, is_inputs_tuple)
