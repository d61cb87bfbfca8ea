"""``shapetorch.nn``: modules, parameters, losses, init and functional, as ``torch.nn``.

Shapes are checked by the shared rules before anything runs: ``nn.Linear(784, 256)`` applied to a
(B, 100) input raises ``matmul_error_inner_dimensions_do_not_match``, the code the static checker uses.
"""

from . import functional, init, parallel, parameter, utils
from .modules import *  # noqa: F403
from .modules import __all__ as _modules_all
from .modules.module import RemovableHandle
from .parallel import DataParallel
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "RemovableHandle",  # noqa: PLE0604
           "DataParallel", "functional", "init", "parallel", "parameter", "utils", *_modules_all]
