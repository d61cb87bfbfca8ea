"""shapetorch: PyTorch's API, with shape errors reported before anything runs.

Importing the package is cheap on purpose: the mypy plugin imports ``shapetorch._rules``, which
runs this file first, and must not pull in NumPy. Public names load on first use (PEP 562).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name.startswith("_"):  # private names are submodules: let the import system load them
        raise AttributeError(name)
    if importlib.util.find_spec(f"shapetorch.{name}") is not None:  # shapetorch.nn, .optim, .fft, ...
        value = importlib.import_module(f"shapetorch.{name}")
    else:
        _api = importlib.import_module("shapetorch._api")
        if name not in _api.FUNCTIONS and not hasattr(_api, name):
            # torch's names for nn functions (torch.conv2d, torch.layer_norm, ...) register with nn, loaded on demand
            importlib.import_module("shapetorch.nn.toplevel")
        try:  # registered ops come from the table, so those added later by register_function count too
            value = _api.FUNCTIONS[name] if name in _api.FUNCTIONS else getattr(_api, name)
        except AttributeError:
            from ._rules.errors import did_you_mean

            hint = did_you_mean(name, _api.__all__)
            raise AttributeError(f"module 'shapetorch' has no attribute {name!r}{hint}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    _api = importlib.import_module("shapetorch._api")
    return sorted(set(globals()) | set(_api.__all__))
