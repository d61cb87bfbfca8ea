"""``shapetorch.distributions``: the distributions policy-gradient and VAE programs reach for first.

Written in shapetorch ops, so ``log_prob``, ``entropy`` and ``rsample`` differentiate as torch's do.
"""

from .categorical import Categorical
from .distribution import Distribution
from .normal import Normal

__all__ = ["Categorical", "Distribution", "Normal"]
