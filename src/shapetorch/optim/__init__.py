"""``shapetorch.optim``: SGD, Adam, AdamW, NAdam, RAdam, Adamax, RMSprop, Adagrad, Adadelta, ASGD, LBFGS, Rprop, Adafactor, SparseAdam, Muon and ``optim.lr_scheduler``, as ``torch.optim``."""

from . import lr_scheduler, swa_utils
from .adafactor import Adafactor
from .algorithms import ASGD, SGD, Adadelta, Adagrad, Adam, Adamax, AdamW, NAdam, RAdam, RMSprop
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rprop import Rprop
from .sparse_adam import SparseAdam

__all__ = [
    "ASGD", "LBFGS", "SGD", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "NAdam", "Optimizer", "RAdam", "RMSprop",
    "Adafactor", "Muon", "Rprop", "SparseAdam",
    "lr_scheduler", "swa_utils",
]
