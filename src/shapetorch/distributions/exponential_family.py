"""``ExponentialFamily``: the base of densities ``exp(<t(x), theta> - F(theta) + k(x))``. From the natural
parameters ``theta`` and the log normaliser ``F`` alone it gives the entropy ``F - <theta, grad F> - E[k]`` and
the KL divergence between two members of one family, the Bregman divergence of ``F`` (Nielsen and Nock), as
torch's: ``grad F`` by autograd at p's natural parameters taken as constants, so the KL's gradient reaches q's
parameters only."""

from __future__ import annotations

from typing import Any

from .._tensor import Tensor
from .distribution import Distribution
from .transforms import sum_rightmost


def _bregman_parts(d: ExponentialFamily, create_graph: bool = False) -> tuple[list[Tensor], Tensor, tuple[Any, ...]]:
    """p's natural parameters as fresh leaves, F at them, and F's gradient there."""
    from ..autograd import grad

    leaves = [p.detach().requires_grad_() for p in d._natural_params]
    log_norm = d._log_normalizer(*leaves)
    return leaves, log_norm, grad(log_norm.sum(), leaves, create_graph=create_graph)


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        # torch's: a graph over the fresh leaves (create_graph), so the result has a grad_fn there too, though
        # it does not reach the distribution's parameters
        leaves, log_norm, grads = _bregman_parts(self, create_graph=True)
        result: Tensor = log_norm - self._mean_carrier_measure
        for theta, g in zip(leaves, grads, strict=True):
            result = result - (theta * g).reshape(*self._batch_shape, -1).sum(-1)
        return result


def bregman_kl(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """KL(p || q) for p and q of one exponential family: F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F>."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot be "
                                  "computed using Bregman divergences")
    leaves, log_norm, grads = _bregman_parts(p)
    q_params = q._natural_params
    result: Tensor = q._log_normalizer(*q_params) - log_norm.detach()
    for theta_p, theta_q, g in zip(leaves, q_params, grads, strict=True):
        result = result - sum_rightmost((theta_q - theta_p.detach()) * g, len(q.event_shape))
    return result
