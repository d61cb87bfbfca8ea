"""``AdaptiveLogSoftmaxWithLoss``: a softmax over many classes split into a frequent "shortlist" and rarer
clusters (Grave et al.'s adaptive softmax), as torch's."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ..._tensor import Tensor
from ...ops.creation import zeros
from ...ops.joining import cat
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """The head scores the ``cutoffs[0]`` shortlist classes and one entry per cluster; cluster ``i`` (classes
    ``cutoffs[i] .. cutoffs[i+1]-1``) has its own two-layer projection of width ``in_features // div_value**(i+1)``.
    ``forward(input, target)`` returns ``(output, loss)``: each target's log-probability and their negated mean."""

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cuts = list(cutoffs)
        if len(cuts) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cuts != sorted(cuts) or min(cuts) <= 0 or max(cuts) > n_classes - 1 or len(set(cuts)) != len(cuts)
                or any(int(c) != c for c in cuts)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        kw = {"device": device, "dtype": dtype}
        self.in_features, self.n_classes, self.div_value, self.head_bias = in_features, n_classes, div_value, head_bias
        self.cutoffs = [*cuts, n_classes]
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, self.cutoffs[i + 1] - self.cutoffs[i], bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for layer in projection.children():
                layer.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> Any:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        batch = target.size(0)
        output = zeros(batch, dtype=input.dtype, device=input.device)
        head_index = target.clone()  # the head entry each row reads: its class, or its cluster's entry
        used = 0
        bounds = [0, *self.cutoffs]
        for i in range(len(bounds) - 1):
            mask = (target >= bounds[i]).logical_and(target < bounds[i + 1])
            rows = mask.nonzero().reshape(-1)
            if rows.numel() == 0:
                continue
            if i > 0:
                cluster = F.log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
                local = cluster.gather(1, (target[mask] - bounds[i]).unsqueeze(1)).squeeze(1)
                output = output.index_add(0, rows, local)
                head_index = head_index.index_fill(0, rows, self.shortlist_size + i - 1)
            used += rows.numel()
        if used != batch:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, 1)

    def log_prob(self, input: Tensor) -> Tensor:
        """The log-probability of every class, (N, n_classes), for an (N, in_features) input (a 1-D input is
        refused, as torch's is)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row of an (N, in_features) input; the full distribution is computed
        only for the rows whose head favours a cluster, as torch does."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        if bool(outside.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        output[outside] = self._get_full_log_prob(input[outside], head_output[outside]).argmax(dim=1)
        return output
