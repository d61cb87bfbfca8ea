"""Module hooks against torch: each scenario builds the same modules with torch and with shapetorch (weights
copied), registers the same hooks, which record what they are called with and when, and the two records
must agree: the order of the calls, the values and gradients the hooks see, and what their results change."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st

Lib = Any


def _norm(x: Any) -> Any:
    """A record entry with tensors as NumPy arrays (and devices, modules by name) to compare across libraries."""
    if isinstance(x, (torch.Tensor, st.Tensor)):
        return ("tensor", x.detach().numpy().copy(), x.requires_grad)
    if isinstance(x, (tuple, list)):
        return type(x)(_norm(v) for v in x) if not hasattr(x, "_fields") else tuple(_norm(v) for v in x)
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return x


def _same(a: Any, b: Any, where: str = "record") -> None:
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b and b[0] == "tensor", f"{where}: {a!r} vs {b!r}"
        assert a[1].shape == b[1].shape, f"{where}: shape {a[1].shape} vs {b[1].shape}"
        np.testing.assert_allclose(a[1], b[1], rtol=1e-5, atol=1e-6, err_msg=where)
        assert a[2] == b[2], f"{where}: requires_grad {a[2]} vs {b[2]}"
        return
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
        return
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: keys {list(a)} vs {list(b)}"
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
        return
    assert a == b, f"{where}: {a!r} vs {b!r}"


def _both(scenario: Callable[[Lib, list[Any]], Any]) -> None:
    """Run ``scenario(lib, log)`` with torch and with shapetorch and compare their logs and results."""
    logs = []
    for lib in (torch, st):
        log: list[Any] = []
        torch.manual_seed(0)
        result = scenario(lib, log)
        logs.append((_norm(log), _norm(result)))
    (log_t, res_t), (log_s, res_s) = logs
    assert [e[0] if isinstance(e, tuple) else e for e in log_t] == [e[0] if isinstance(e, tuple) else e
                                                                   for e in log_s], "order of the hook calls"
    _same(log_t, log_s)
    _same(res_t, res_s, "result")


def _data(lib: Lib, *shape: int, seed: int = 0, requires_grad: bool = False) -> Any:
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return lib.tensor(a, requires_grad=requires_grad)


def _linear(lib: Lib, n_in: int, n_out: int, seed: int = 1) -> Any:
    m = lib.nn.Linear(n_in, n_out)
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((n_out, n_in)).astype(np.float32)))
        m.bias.copy_(lib.tensor(rng.standard_normal(n_out).astype(np.float32)))
    return m


def _two_inputs(lib: Lib) -> Any:
    class Mix(lib.nn.Module):
        """forward(a, b, scale=...): two positional tensors, a keyword, two outputs."""

        def forward(self, a: Any, b: Any, scale: float = 1.0) -> Any:
            return a * b * scale, (a - b).sum(1)

    return Mix()


# -- forward hooks ---------------------------------------------------------------------------------------------

def test_forward_hooks_order_prepend_kwargs_and_results() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        m = _two_inputs(lib)
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", args)))
        m.register_forward_pre_hook(lambda mod, args: (log.append(("pre0", args)), (args[0] + 1, args[1]))[1],
                                    prepend=True)

        def pre_kw(mod: Any, args: Any, kwargs: Any) -> Any:
            log.append(("pre_kw", args, dict(kwargs)))
            return args, {**kwargs, "scale": 3.0}

        m.register_forward_pre_hook(pre_kw, with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("fwd1", args, out)))
        m.register_forward_hook(lambda mod, args, kwargs, out: (log.append(("fwd_kw", dict(kwargs), out)),
                                                                (out[0] * 2, out[1]))[1], with_kwargs=True)
        h = m.register_forward_hook(lambda mod, args, out: log.append(("fwd0", out)), prepend=True)
        removed = m.register_forward_hook(lambda mod, args, out: log.append(("never", out)))
        removed.remove()
        a, b = _data(lib, 2, 3), _data(lib, 2, 3, seed=2)
        first = m(a, b, scale=0.5)
        h.remove()
        with m.register_forward_pre_hook(lambda mod, args: log.append(("ctx", args))):
            m(a, b)
        third = m(a, b)
        return first, third

    _both(scenario)


def test_always_call_hook_runs_when_forward_raises() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        class Boom(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, args, out: log.append(("plain", out)))
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("always_kw", out, dict(kwargs))),
                                with_kwargs=True, always_call=True)

        def raises(mod: Any, args: Any, out: Any) -> None:
            log.append("always_raising")
            raise KeyError("hook")

        m.register_forward_hook(raises, always_call=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with pytest.raises(ValueError, match="boom"):
                m(_data(lib, 2))
        log.append(("warned", len(caught)))
        return None

    _both(scenario)


def test_forward_pre_hook_with_kwargs_must_return_a_pair() -> None:
    for lib in (torch, st):
        m = _linear(lib, 3, 2)
        m.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, "
                                               r"new_kwargs\), but got 5\.") as info:
            m(_data(lib, 2, 3))
        if lib is st:
            assert info.value.code == "module_hook_error_result"


# -- full backward hooks ---------------------------------------------------------------------------------------

def _record_backward(lib: Lib, m: Any, name: str, log: list[Any]) -> None:
    m.register_full_backward_pre_hook(lambda mod, go: log.append((f"{name}.pre", go)))
    m.register_full_backward_hook(lambda mod, gi, go: log.append((f"{name}.full", gi, go)))


def test_full_backward_hooks_see_torchs_gradients_in_torchs_order() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        lin1, act, lin2 = _linear(lib, 4, 3), lib.nn.Tanh(), _linear(lib, 3, 3, seed=5)
        mix = _two_inputs(lib)
        for name, m in (("lin1", lin1), ("act", act), ("lin2", lin2), ("mix", mix)):
            _record_backward(lib, m, name, log)
        x = _data(lib, 2, 4, requires_grad=True)
        h = act(lin1(x))
        h.register_hook(lambda g: log.append(("tensor_hook", g)))
        prod, diff = mix(h, lin2(h), scale=2.0)  # grad_input has one entry per positional argument
        (prod.sum() + (diff ** 2).sum()).backward()
        return x.grad, lin1.weight.grad, lin2.bias.grad

    _both(scenario)


def test_full_backward_hooks_replace_gradients() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        lin1, lin2 = _linear(lib, 4, 3), _linear(lib, 3, 2, seed=4)
        lin2.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10,))
        lin2.register_full_backward_hook(lambda mod, gi, go: log.append(("lin2", gi, go)))
        lin2.register_full_backward_hook(lambda mod, gi, go: log.append(("lin2.first", gi)), prepend=True)
        lin1.register_full_backward_hook(lambda mod, gi, go: (gi[0] * -1,))
        lin1.register_full_backward_hook(lambda mod, gi, go: log.append(("lin1.after", gi, go)))
        x = _data(lib, 5, 4, requires_grad=True)
        lin2(lin1(x)).pow(2).sum().backward()
        return x.grad, lin1.weight.grad, lin2.weight.grad

    _both(scenario)


def test_full_backward_hook_when_no_input_requires_grad() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        mix = _two_inputs(lib)
        lin = _linear(lib, 3, 3)
        _record_backward(lib, mix, "mix", log)
        _record_backward(lib, lin, "lin", log)
        a = _data(lib, 2, 3)
        out, _ = mix(lin(a), _data(lib, 2, 3, seed=3))  # the second output takes no gradient: None in grad_output
        out.sum().backward()
        x = _data(lib, 2, 3)
        lin(x).sum().backward()  # no input requires grad: the hook runs with grad_input (None,)
        return lin.weight.grad

    _both(scenario)


def test_module_global_hooks_run_before_the_modules_own() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        mm = lib.nn.modules.module
        lin = _linear(lib, 3, 2)
        lin.register_forward_pre_hook(lambda mod, args: log.append("own.pre"))
        lin.register_forward_hook(lambda mod, args, out: log.append("own.fwd"))
        lin.register_full_backward_hook(lambda mod, gi, go: log.append(("own.bwd", gi)))
        handles = [
            mm.register_module_forward_pre_hook(lambda mod, args: log.append(("global.pre", type(mod).__name__))),
            mm.register_module_forward_hook(lambda mod, args, out: log.append(("global.fwd", out))),
            mm.register_module_full_backward_pre_hook(lambda mod, go: log.append(("global.bpre", go))),
            mm.register_module_full_backward_hook(lambda mod, gi, go: log.append(("global.bwd", gi))),
            mm.register_module_forward_hook(lambda mod, args, kwargs, out: log.append(("global.kw", dict(kwargs))),
                                            with_kwargs=True, always_call=True),
        ]
        try:
            x = _data(lib, 2, 3, requires_grad=True)
            lin(x).sum().backward()
        finally:
            for h in handles:
                h.remove()
        lin(x)  # after removal only the module's own hooks run
        return x.grad

    _both(scenario)


@pytest.mark.parametrize("case", ["grad_input_count", "grad_output_count", "no_input_result"])
def test_backward_hook_results_torch_refuses(case: str) -> None:
    messages = []
    for lib in (torch, st):
        lin = _linear(lib, 3, 2)
        x = _data(lib, 4, 3, requires_grad=case != "no_input_result")
        if case == "grad_input_count":
            lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
        elif case == "grad_output_count":
            lin.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        else:
            lin.register_full_backward_hook(lambda mod, gi, go, lib=lib: (lib.ones(4, 3),))
        with pytest.raises(RuntimeError) as info:
            lin(x).sum().backward()
        messages.append(str(info.value))
        if lib is st:
            assert info.value.code == "module_hook_error_result"
    assert messages[0] == messages[1]


@pytest.mark.parametrize("where", ["output", "input", "view_of_output"])
def test_inplace_on_a_hooked_modules_output_is_refused(where: str) -> None:
    messages = []
    for lib in (torch, st):
        lin = _linear(lib, 3, 2)
        x = _data(lib, 4, 3)
        if where in ("output", "view_of_output"):
            lin.register_full_backward_hook(lambda *a: None)
            run = (lambda: lin(x).add_(1)) if where == "output" else (lambda: lin(x)[1:].t().mul_(2))
        else:  # a layer that modifies its (hooked) input in place
            class AddOne(lib.nn.Module):
                def forward(self, t: Any) -> Any:
                    return t.add_(1)

            add = AddOne()
            add.register_full_backward_hook(lambda *a: None)
            run = lambda: add(lin(x))  # noqa: E731
        with pytest.raises(RuntimeError) as info:
            run()
        messages.append(str(info.value))
        if lib is st:
            assert info.value.code == "autograd_error_custom_view_inplace"
        with lib.no_grad():  # without a graph there is no hook and nothing to refuse
            (lin(x).add_(1) if where != "input" else add(lin(x)))
    if where == "view_of_output":  # torch names its view op (Slice, T); the reason is the same
        messages = [m.split(" is a view ", 1)[1] for m in messages]
    assert messages[0] == messages[1]


# -- state-dict hooks ------------------------------------------------------------------------------------------

def _net(lib: Lib) -> Any:
    net = lib.nn.Sequential(_linear(lib, 3, 4), lib.nn.BatchNorm1d(4), lib.nn.Sequential(_linear(lib, 4, 2, 7)))
    return net


def test_state_dict_hooks_order_and_changes() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        net = _net(lib)
        for name, m in net.named_modules():
            m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars, name=name: log.append(
                ("pre", name, prefix, keep_vars)))

            def post(mod: Any, sd: Any, prefix: str, meta: Any, name: str = name) -> None:
                log.append(("post", name, prefix, list(sd)))
            m.register_state_dict_post_hook(post)

        def drop(mod: Any, sd: Any, prefix: str, meta: Any) -> None:
            del sd[prefix + "running_var"]
            sd[prefix + "extra"] = mod.running_mean * 2

        net[1].register_state_dict_post_hook(drop)
        sd = net.state_dict(keep_vars=True)
        return list(sd), sd[1 and "1.extra"]

    _both(scenario)


def test_state_dict_post_hook_must_return_none() -> None:
    for lib in (torch, st):
        lin = _linear(lib, 2, 2)
        lin.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
        with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
            lin.state_dict()


def test_load_state_dict_hooks_rename_and_forgive() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        src = _net(lib)
        saved = dict(src.state_dict())
        saved["2.0.old_weight"] = saved.pop("2.0.weight")  # an older checkpoint's name
        saved["unused"] = saved["0.bias"]
        dst = _net(lib)
        with lib.no_grad():
            for p in dst.parameters():
                p.zero_()

        def rename(mod: Any, sd: Any, prefix: str, meta: Any, strict: bool, missing: list[str],
                   unexpected: list[str], errors: list[str]) -> None:
            log.append(("pre", prefix, sorted(sd), strict, list(missing), list(unexpected)))
            if prefix + "old_weight" in sd:
                sd[prefix + "weight"] = sd.pop(prefix + "old_weight")

        for name, m in dst.named_modules():
            m.register_load_state_dict_pre_hook(rename)
            m.register_load_state_dict_post_hook(lambda mod, keys, name=name: log.append(
                ("post", name, list(keys.missing_keys), list(keys.unexpected_keys))))

        def forgive(mod: Any, keys: Any) -> None:
            keys.unexpected_keys.clear()

        dst.register_load_state_dict_post_hook(forgive)
        result = dst.load_state_dict(saved)
        return list(dst.parameters()), (list(result.missing_keys), list(result.unexpected_keys))

    _both(scenario)


def test_load_state_dict_loads_what_matches_before_raising() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        net = _net(lib)
        sd = {k: v + 1 for k, v in net.state_dict().items()}
        sd["0.weight"] = sd["0.weight"][:2]
        del sd["1.bias"]
        with pytest.raises(RuntimeError) as info:
            net.load_state_dict(sd)
        log.append(("message", str(info.value).replace("shapetorch", "torch").splitlines()[1:]))
        return list(net.parameters())

    _both(scenario)


def test_global_registration_hooks_see_and_replace_what_modules_register() -> None:
    def scenario(lib: Lib, log: list[Any]) -> Any:
        mm = lib.nn.modules.module

        def on_buffer(mod: Any, name: str, value: Any) -> Any:
            log.append(("buffer", type(mod).__name__, name, value))
            return None if value is None else value * 2

        handles = [
            mm.register_module_buffer_registration_hook(on_buffer),
            mm.register_module_parameter_registration_hook(
                lambda mod, name, p: log.append(("param", type(mod).__name__, name, tuple(p.shape)))),
            mm.register_module_module_registration_hook(
                lambda mod, name, sub: log.append(("module", type(mod).__name__, name, type(sub).__name__))),
        ]
        try:
            class Net(lib.nn.Module):
                def __init__(self) -> None:
                    super().__init__()
                    self.fc = lib.nn.Linear(2, 3)
                    self.register_buffer("scale", lib.ones(3))
                    self.add_module("act", lib.nn.ReLU())
                    self.bias = lib.nn.Parameter(lib.zeros(3))
                    self.scale = lib.full((3,), 3.0)  # assigning to a buffer name registers it again

            net = Net()
            bn = lib.nn.BatchNorm1d(2)
        finally:
            for h in handles:
                h.remove()
        lib.nn.Linear(1, 1)  # removed: not seen
        return net.scale, bn.running_var

    _both(scenario)
