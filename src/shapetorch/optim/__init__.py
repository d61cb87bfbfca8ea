"""``shapetorch.optim``: SGD, Adam, AdamW, RMSprop, Adagrad and ``optim.lr_scheduler``, as ``torch.optim``."""

from . import lr_scheduler
from .algorithms import SGD, Adagrad, Adam, AdamW, RMSprop
from .optimizer import Optimizer

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Optimizer", "RMSprop", "lr_scheduler"]
