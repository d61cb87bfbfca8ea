"""The rest of the runtime's public names: loose declarations read from the op registry.
"""

from __future__ import annotations

from .tables import runtime_names, stub_names

RANDOM_TENSORS = {"randint", "randint_like", "randperm", "multinomial", "bernoulli", "poisson"}


def _loose(name: str, fn: object, method: bool) -> str:
    """``def name(<the runtime's parameter names, Any>) -> Incomplete`` for an op without a template."""
    import inspect

    first = "self, " if method else ""
    try:
        params = list(inspect.signature(fn).parameters.values())  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"def {name}({first}*args: Any, **kwargs: Any) -> Incomplete: ..."
    if method and params:
        params = params[1:]
    parts: list[str] = []
    star = False
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}: Any")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}: Any")
        else:
            if p.kind is p.KEYWORD_ONLY and not star:
                parts.append("*")
                star = True
            parts.append(f"{p.name}: Any" + ("" if p.default is p.empty else " = ..."))
        if p.kind is p.POSITIONAL_ONLY and (p is params[-1] or params[params.index(p) + 1].kind is not p.POSITIONAL_ONLY):
            parts.append("/")
    if method and parts and parts[0] == "/":
        parts = parts[1:]
    return f"def {name}({', '.join((['self'] if method else []) + parts)}) -> Incomplete: ..."


def registry_rest(text: str) -> str:
    """Fill the two placeholders with every runtime public name the templates above did not declare."""
    import inspect

    import shapetorch._api as api
    from shapetorch.ops import _registry

    have_mod, have_tensor = stub_names(text.replace("#REGISTRY_METHODS", "pass"))
    want_mod, want_tensor = runtime_names()
    methods = []
    for name in sorted(want_tensor - have_tensor):
        methods.append("    " + _loose(name, _registry.METHODS[name], True))
    funcs = []
    for name in sorted(want_mod - have_mod):
        obj = _registry.FUNCTIONS.get(name) or getattr(api, name, None)
        if inspect.ismodule(obj) or obj is None:
            funcs.append(f"{name}: Incomplete")
        elif inspect.isclass(obj):
            funcs += [f"class {name}:", "    def __init__(self, *args: Any, **kwargs: Any) -> None: ...",
                      "    def __getattr__(self, name: str) -> Incomplete: ...",
                      "    def __call__(self, *args: Any, **kwargs: Any) -> Incomplete: ...",
                      "    def __enter__(self) -> Incomplete: ...",
                      "    def __exit__(self, *args: Any) -> None: ..."]
        elif callable(obj):
            line = _loose(name, obj, False)
            # random index draws: typed as tensors, so that x[st.randint(...)] is no Any index, which mypy
            # without the plugin matched to __getitem__'s int overload (a dimension dropped: a false error)
            funcs.append(line.replace("-> Incomplete", "-> Tensor[Any, Any]") if name in RANDOM_TENSORS else line)
        else:
            funcs.append(f"{name}: Incomplete")
    text = text.replace("    #REGISTRY_METHODS\n", "\n".join(methods) + "\n" if methods else "    pass\n")
    return text.replace("#REGISTRY_FUNCTIONS\n", "\n".join(funcs) + "\n")
