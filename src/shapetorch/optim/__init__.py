"""``shapetorch.optim``: SGD, Adam, AdamW, NAdam, RAdam, Adamax, RMSprop, Adagrad, Adadelta, ASGD, LBFGS and ``optim.lr_scheduler``, as ``torch.optim``."""

from . import lr_scheduler, swa_utils
from .algorithms import ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer

__all__ = [
    "ASGD", "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "NAdam", "Optimizer", "RAdam", "RMSprop",
    "lr_scheduler", "swa_utils",
]
