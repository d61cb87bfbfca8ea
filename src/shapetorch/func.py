"""``shapetorch.func``: torch.func's function transforms, built on the autograd engine.

``grad``, ``grad_and_value``, ``vjp``, ``jacrev`` differentiate in reverse mode and ``jvp``, ``jacfwd`` in forward
mode; every transform keeps the graph when its inputs already carry one, so transforms nest (``hessian`` is
``jacfwd(jacrev(f))``). ``vmap`` is the loop of :mod:`shapetorch.ops.vmap`. ``functional_call`` runs a module with
parameters and buffers given in a dict, ``stack_module_state`` stacks those of several copies of a model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ._tensor import Tensor
from .autograd import forward_ad
from .autograd import grad as _autograd_grad
from .autograd.functional import jacobian as _jacobian
from .ops.vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "stack_module_state",
           "vjp", "vmap"]


def _leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    if isinstance(tree, dict):
        return [x for t in tree.values() for x in _leaves(t)]
    return [tree]


def _rebuild(tree: Any, new: list[Any]) -> Any:
    it = iter(new)

    def go(t: Any) -> Any:
        if isinstance(t, (tuple, list)):
            return type(t)(go(x) for x in t)
        if isinstance(t, dict):
            return {k: go(v) for k, v in t.items()}
        return next(it)

    return go(tree)


def _track(x: Any) -> Any:
    """A tensor that the engine differentiates with respect to: an identity node over ``x`` when x is already in a
    graph (an outer transform differentiates through it), else a fresh leaf."""
    if not isinstance(x, Tensor):
        raise TypeError(f"expected the differentiated arguments to be Tensors, got {type(x).__name__}")
    if x.requires_grad:
        return x.view_as(x)  # (the view's jvp rule carries a dual tensor's tangents over)
    return forward_ad.detach_keeping_tangents(x, requires_grad=True)


def _nested(x: Any) -> bool:
    """Whether an outer transform differentiates through ``x`` (a reverse one: it requires grad; a forward one: it
    carries a tangent): the gradient is then computed in differentiable ops and kept in the outer graph."""
    return isinstance(x, Tensor) and (x.requires_grad or bool(x._fw_grads))


def _argnums(argnums: int | tuple[int, ...], n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{name}: argnums must be non-empty")
    for a in nums:
        if not isinstance(a, int) or not -n <= a < n:
            raise RuntimeError(f"Got argnums={argnums} but only {n} positional inputs")
    return tuple(a % n for a in nums)


def grad_and_value(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
    """A function returning ``(gradient of func at argnums, func's value)`` (``((grad, (value, aux)))`` with aux)."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), "grad_and_value")
        nested = any(_nested(x) for a in args for x in _leaves(a))
        reverse_nested = any(isinstance(x, Tensor) and x.requires_grad for a in args for x in _leaves(a))
        args = list(args)
        tracked = {i: _rebuild(args[i], [_track(x) for x in _leaves(args[i])]) for i in nums}
        for i, t in tracked.items():
            args[i] = t  # type: ignore[index]
        out = func(*args, **kwargs)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise RuntimeError("grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) "
                                   "if has_aux is True")
            out, aux = out
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
        if out.numel() != 1 or out._data.ndim != 0:
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out._data.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        inputs = [x for i in nums for x in _leaves(tracked[i])]
        gs = _autograd_grad(out, inputs, create_graph=nested, allow_unused=True)
        gs = [g if g is not None else x.new_zeros(x._data.shape) for g, x in zip(gs, inputs)]
        if not reverse_nested:  # (a forward-mode transform outside still reads the results' tangents)
            gs = [forward_ad.detach_keeping_tangents(g) for g in gs]
            out = forward_ad.detach_keeping_tangents(out)
        pos = 0
        per_arg = []
        for i in nums:
            n = len(_leaves(tracked[i]))
            per_arg.append(_rebuild(tracked[i], gs[pos:pos + n]))
            pos += n
        g_out = per_arg[0] if isinstance(argnums, int) else tuple(per_arg)
        return (g_out, (out, aux)) if has_aux else (g_out, out)

    return wrapper


def grad(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function with respect to the arguments ``argnums`` (``(grad, aux)`` with aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def vjp(func: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Any:
    """``(func(*primals), vjp_fn)``; ``vjp_fn(cotangents)`` gives one gradient per primal."""
    nested = any(_nested(x) for p in primals for x in _leaves(p))
    tracked = [_rebuild(p, [_track(x) for x in _leaves(p)]) for p in primals]
    out = func(*tracked)
    aux = None
    if has_aux:
        out, aux = out
    outs = _leaves(out)
    inputs = [x for t in tracked for x in _leaves(t)]

    def vjp_fn(cotangents: Any, *, retain_graph: bool = True, create_graph: bool | None = None) -> tuple[Any, ...]:
        cots = _leaves(cotangents)
        if len(cots) != len(outs):
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of "
                               f"outputs to the function ({len(cots)} leaves vs {len(outs)})")
        for c, o in zip(cots, outs):
            if tuple(c.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output has a shape of {tuple(c.shape)} and output has "
                                   f"a shape of {tuple(o.shape)}")
        gs = _autograd_grad(outs, inputs, cots, retain_graph=True, create_graph=nested if create_graph is None
                            else create_graph, allow_unused=True)
        gs = [g if g is not None else x.new_zeros(x._data.shape) for g, x in zip(gs, inputs)]
        pos, res = 0, []
        for t in tracked:
            n = len(_leaves(t))
            res.append(_rebuild(t, [g if nested else g.detach() for g in gs[pos:pos + n]]))
            pos += n
        return tuple(res)

    shown = out if nested else _rebuild(out, [o.detach() for o in outs])
    return (shown, vjp_fn, aux) if has_aux else (shown, vjp_fn)


def jvp(func: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], *,
        has_aux: bool = False) -> Any:
    """``(func(*primals), the directional derivative along tangents)``, in forward mode (dual numbers)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to be tuples")
    if len(primals) != len(tangents):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have the same length")
    with forward_ad.dual_level():
        duals = []
        for p, t in zip(primals, tangents):
            if tuple(p.shape) != tuple(t.shape):
                raise RuntimeError(f"jvp(f, primals, tangents): Expected primals and tangents to have the same "
                                   f"shape, got {tuple(p.shape)} and {tuple(t.shape)}")
            duals.append(forward_ad.make_dual(p, t))
        out = func(*duals)
        aux = None
        if has_aux:
            out, aux = out
        leaves = _leaves(out)
        prim, tang = [], []
        for o in leaves:
            u = forward_ad.unpack_dual(o)
            prim.append(u.primal)
            tang.append(u.tangent if u.tangent is not None else u.primal.new_zeros(u.primal._data.shape))
    res = (_rebuild(out, prim), _rebuild(out, tang))
    return (*res, aux) if has_aux else res


def _jac(func: Callable[..., Any], argnums: int | tuple[int, ...], has_aux: bool, strategy: str,
         name: str) -> Callable[..., Any]:
    def wrapper(*args: Any) -> Any:
        nums = _argnums(argnums, len(args), name)
        nested = any(_nested(x) for a in args for x in _leaves(a))
        aux_box: list[Any] = []

        def f(*diff: Any) -> Any:
            full = list(args)
            for i, d in zip(nums, diff):
                full[i] = d
            out = func(*full)
            if has_aux:
                out, aux = out
                aux_box.append(aux)
            return out

        inputs = tuple(args[i] for i in nums)
        J = _jacobian(f, inputs, create_graph=nested, strategy=strategy,
                      vectorize=strategy == "forward-mode")
        # torch.autograd.functional returns J[output][input]; torch.func's layout is the same, with the
        # input level dropped for an int argnums
        out_is_tuple = isinstance(J, tuple) and len(J) and isinstance(J[0], tuple)
        if isinstance(argnums, int):
            J = tuple(j[0] for j in J) if out_is_tuple else J[0]
        return (J, aux_box[0]) if has_aux else J

    return wrapper


def jacrev(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, *, has_aux: bool = False,
           chunk_size: int | None = None) -> Callable[..., Any]:
    """The Jacobian by reverse mode: ``output.shape + input.shape``."""
    return _jac(func, argnums, has_aux, "reverse-mode", "jacrev")


def jacfwd(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0, has_aux: bool = False, *,
           randomness: str = "error") -> Callable[..., Any]:
    """The Jacobian by forward mode (one tangent per input element)."""
    return _jac(func, argnums, has_aux, "forward-mode", "jacfwd")


def hessian(func: Callable[..., Any], argnums: int | tuple[int, ...] = 0) -> Callable[..., Any]:
    """The matrix of second derivatives of a scalar function. torch composes ``jacfwd(jacrev(func))``; here both
    levels are reverse mode (the same numbers: forward mode does not run through a backward pass here)."""
    return jacrev(jacrev(func, argnums), argnums)


def functional_call(module: Any, parameter_and_buffer_dicts: Any, args: Any = None, kwargs: Any = None, *,
                    tie_weights: bool = True, strict: bool = False) -> Any:
    """Call ``module`` with the parameters and buffers named in the dict(s) in place of its own, then put its own
    back. Names not in the dicts keep the module's tensors (unless ``strict``)."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, dict):
        given = dict(dicts)
    else:
        given = {}
        for d in dicts:
            dup = set(given) & set(d)
            if dup:
                raise ValueError(f"{sorted(dup)} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            given.update(d)
    own = dict(module.named_parameters(remove_duplicate=False)) | dict(module.named_buffers(remove_duplicate=False))
    unknown = [k for k in given if k not in own]
    missing = [k for k in own if k not in given]
    if strict and (unknown or missing):
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}: unexpected keys {unknown}, "
                           f"missing keys {missing}")
    if tie_weights:  # a tensor shared by two names takes the value given for either
        by_id: dict[int, list[str]] = {}
        for k, v in own.items():
            by_id.setdefault(id(v), []).append(k)
        for names in by_id.values():
            chosen = [given[n] for n in names if n in given]
            if chosen:
                for n in names:
                    given.setdefault(n, chosen[0])
    saved: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for name, value in given.items():
            owner = module
            *path, leaf = name.split(".")
            for p in path:
                owner = getattr(owner, p)
            table = owner._parameters if leaf in owner._parameters else owner._buffers if leaf in owner._buffers \
                else None
            if table is None:
                if strict:
                    raise RuntimeError(f"functional_call: {name} is not a parameter or buffer of the module")
                continue
            saved.append((table, leaf, table[leaf]))
            table[leaf] = value
        a = args if isinstance(args, tuple) else () if args is None else (args,)
        return module(*a, **(kwargs or {}))
    finally:
        for table, leaf, old in reversed(saved):
            table[leaf] = old


def stack_module_state(models: Sequence[Any]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of several models of one structure, each stacked along a new dim 0 (the
    parameters as new leaves that require grad, as torch's)."""
    from .ops.joining import stack

    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    first = models[0]
    if any(type(m) is not type(first) for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    params = {k: stack([dict(m.named_parameters())[k].detach() for m in models]).requires_grad_(
        dict(first.named_parameters())[k].requires_grad) for k, _ in first.named_parameters()}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models]) for k, _ in first.named_buffers()}
    return params, buffers
