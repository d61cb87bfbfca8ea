"""``nn.utils.prune`` against torch: the masks each method computes (alone, repeated on one tensor, across
tensors), the ``<name>_orig`` / ``<name>_mask`` reparametrisation and its hook, gradients through the mask,
``remove`` and the refusals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.utils.prune

import shapetorch as st
import shapetorch.nn.utils.prune

W1 = np.random.default_rng(0).standard_normal((6, 5)).astype(np.float32)
W2 = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)


def _net(lib: Any) -> Any:
    net = lib.nn.Sequential(lib.nn.Linear(5, 6), lib.nn.ReLU(), lib.nn.Linear(6, 4))
    with lib.no_grad():
        net[0].weight.copy_(lib.from_numpy(W1.copy()))
        net[2].weight.copy_(lib.from_numpy(W2.copy()))
        net[0].bias.fill_(0.1)
        net[2].bias.fill_(-0.2)
    return net


def _both(steps: Any) -> None:
    """Run ``steps(lib, net)`` on each library's copy of one net; the masks, weights and names must agree."""
    nets = {}
    for lib in (torch, st):
        net = _net(lib)
        steps(lib.nn.utils.prune, net)
        nets[lib] = net
    ours, theirs = nets[st], nets[torch]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    for (name, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, err_msg=name)
    for i in (0, 2):
        np.testing.assert_array_equal(ours[i].weight.detach().numpy(), theirs[i].weight.detach().numpy())
    assert st.nn.utils.prune.is_pruned(ours) == torch.nn.utils.prune.is_pruned(theirs)


@pytest.mark.parametrize("amount", [0.0, 0.3, 7, 30])
def test_l1_unstructured_masks_as_torch(amount: Any) -> None:
    _both(lambda prune, net: prune.l1_unstructured(net[0], "weight", amount=amount))


@pytest.mark.parametrize(("amount", "n", "dim"), [(2, 2, 0), (0.4, 1, 1), (1, float("inf"), -1), (0, 2, 0)])
def test_ln_structured_masks_as_torch(amount: Any, n: Any, dim: int) -> None:
    _both(lambda prune, net: prune.ln_structured(net[0], "weight", amount=amount, n=n, dim=dim))


def test_repeated_pruning_chooses_among_the_unpruned_as_torch() -> None:
    def steps(prune: Any, net: Any) -> None:
        prune.l1_unstructured(net[0], "weight", amount=5)
        prune.l1_unstructured(net[0], "weight", amount=5)   # five more, not the same five again
        prune.ln_structured(net[0], "weight", amount=1, n=1, dim=0)
        prune.identity(net[2], "bias")

    _both(steps)


def test_global_unstructured_and_custom_mask_as_torch() -> None:
    def steps(prune: Any, net: Any) -> None:
        prune.l1_unstructured(net[0], "weight", amount=0.2)
        prune.global_unstructured([(net[0], "weight"), (net[2], "weight")], pruning_method=prune.L1Unstructured,
                                  amount=0.5)
        mask = (net[2].bias.detach() * 0).to(net[2].bias.dtype)
        mask[1] = 1
        prune.custom_from_mask(net[2], "bias", mask)

    _both(steps)


def test_mask_is_applied_each_forward_and_gradients_reach_orig_as_torch() -> None:
    x = np.random.default_rng(2).standard_normal((3, 5)).astype(np.float32)
    grads = []
    for lib in (torch, st):
        net = _net(lib)
        lib.nn.utils.prune.l1_unstructured(net[0], "weight", amount=0.5)
        with lib.no_grad():
            net[0].weight_orig.add_(1.0)   # the hook must recompute weight from the new orig
        net(lib.from_numpy(x)).sum().backward()
        grads.append((net[0].weight_orig.grad.numpy().copy(), net[0].weight.detach().numpy().copy()))
    np.testing.assert_allclose(grads[1][0], grads[0][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(grads[1][1], grads[0][1])


def test_remove_makes_pruning_permanent_as_torch() -> None:
    def steps(prune: Any, net: Any) -> None:
        prune.l1_unstructured(net[0], "weight", amount=0.5)
        prune.l1_unstructured(net[0], "weight", amount=3)
        prune.remove(net[0], "weight")

    _both(steps)
    net = _net(st)
    st.nn.utils.prune.l1_unstructured(net[0], "weight", amount=0.5)
    st.nn.utils.prune.remove(net[0], "weight")
    assert isinstance(net[0].weight, st.nn.Parameter) and not net[0]._forward_pre_hooks


@pytest.mark.parametrize("case", ["negative", "fraction", "type", "too_many", "not_pruned", "structured_1d",
                                  "global_structured", "dim"])
def test_refusals_as_torch(case: str) -> None:
    outcomes, names = [], []
    for lib in (torch, st):
        prune, net = lib.nn.utils.prune, _net(lib)
        names.append(lambda net=net: [n for n, _ in net.named_parameters()])
        with pytest.raises(Exception) as info:
            if case == "negative":
                prune.l1_unstructured(net[0], "weight", amount=-1)
            elif case == "fraction":
                prune.l1_unstructured(net[0], "weight", amount=1.5)
            elif case == "type":
                prune.l1_unstructured(net[0], "weight", amount="half")
            elif case == "too_many":
                prune.l1_unstructured(net[0], "weight", amount=31)
            elif case == "not_pruned":
                prune.remove(net[0], "weight")
            elif case == "dim":
                prune.ln_structured(net[0], "weight", amount=1, n=2, dim=2)
            elif case == "structured_1d":
                prune.ln_structured(net[0], "bias", amount=1, n=2, dim=0)
            else:
                prune.global_unstructured([(net[0], "weight")], pruning_method=prune.LnStructured, amount=1, n=2)
        outcomes.append(info.value)
    theirs, ours = outcomes
    builtin = next(c for c in type(theirs).__mro__ if c.__module__ == "builtins")
    assert isinstance(ours, builtin) and getattr(ours, "code", None)
    # a refusal leaves the module with the parameters it had (torch re-registers the weight last)
    assert names[1]() == names[0]()
    assert not st.nn.utils.prune.is_pruned(net)
