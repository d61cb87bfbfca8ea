"""``nn.utils.parametrize`` and ``parametrizations.weight_norm`` against torch: names, state dict, values and
gradients, a custom parametrization with ``right_inverse``, and removal."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import shapetorch as st


def _load(sm: Any, tm: Any) -> None:
    sm.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})


@pytest.mark.parametrize("make,shape,dim", [
    (lambda nn: nn.Conv1d(2, 3, 3), (2, 2, 7), 0),
    (lambda nn: nn.Linear(4, 5), (3, 4), 0),
    (lambda nn: nn.Linear(4, 5), (3, 4), 1),
    (lambda nn: nn.Conv2d(2, 4, 3), (1, 2, 5, 5), None),
])
def test_weight_norm_matches_torch(make: Any, shape: tuple[int, ...], dim: Any) -> None:
    torch.manual_seed(0)
    tm = torch.nn.utils.parametrizations.weight_norm(make(torch.nn).double(), dim=dim)
    sm = st.nn.utils.parametrizations.weight_norm(make(st.nn).double(), dim=dim)
    assert type(sm).__name__ == type(tm).__name__
    assert [(k, tuple(v.shape)) for k, v in sm.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in tm.state_dict().items()]
    assert [n for n, _ in sm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert repr(sm) == repr(tm)
    _load(sm, tm)
    x = np.random.default_rng(0).standard_normal(shape)
    yt, ys = tm(torch.tensor(x)), sm(st.tensor(x))
    np.testing.assert_allclose(ys.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    (yt ** 2).sum().backward()
    (ys ** 2).sum().backward()
    for (n, ps), (_, pt) in zip(sm.named_parameters(), tm.named_parameters(), strict=True):
        np.testing.assert_allclose(ps.grad.numpy(), pt.grad.numpy(), rtol=1e-10, err_msg=n)
    # the original split reproduces the weight it was made from
    np.testing.assert_allclose(sm.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)


class _Symmetric:
    @staticmethod
    def make(lib: Any) -> Any:
        class Symmetric(lib.nn.Module):
            def forward(self, x: Any) -> Any:
                return x.triu() + x.triu(1).transpose(-1, -2)

            def right_inverse(self, a: Any) -> Any:
                return a.triu()

        return Symmetric()


def test_custom_parametrization_setter_and_removal_as_torch() -> None:
    results = []
    for lib in (torch, st):
        lib.manual_seed(0)
        m = lib.nn.Linear(3, 3)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(np.arange(9.0, dtype=np.float32).reshape(3, 3)))
        lib.nn.utils.parametrize.register_parametrization(m, "weight", _Symmetric.make(lib))
        w = m.weight.detach().numpy().copy()
        assert lib.nn.utils.parametrize.is_parametrized(m) and lib.nn.utils.parametrize.is_parametrized(m, "weight")
        assert not lib.nn.utils.parametrize.is_parametrized(m, "bias")
        m.weight = lib.tensor(np.full((3, 3), 2.0, dtype=np.float32))  # through right_inverse
        w2 = m.weight.detach().numpy().copy()
        orig = m.parametrizations.weight.original.detach().numpy().copy()
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
        results.append((w, w2, orig, type(m).__name__, sorted(n for n, _ in m.named_parameters()),
                        m.weight.detach().numpy().copy()))
    for a, b in zip(*results, strict=True):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b)
        else:
            assert a == b


@pytest.mark.parametrize("make", [lambda lib: lib.nn.Linear(5, 4), lambda lib: lib.nn.Conv2d(2, 3, 3),
                                  lambda lib: lib.nn.ConvTranspose2d(2, 3, 3)], ids=["linear", "conv", "conv_transpose"])
def test_spectral_norm_parametrization_trains_as_torch(make) -> None:
    import torch.nn.utils.parametrizations as TP

    from shapetorch.nn.utils.parametrizations import spectral_norm

    theirs, ours = TP.spectral_norm(make(torch)), spectral_norm(make(st))
    assert list(ours.state_dict()) == list(theirs.state_dict())  # original, then the _u/_v buffers
    ours.load_state_dict({k: st.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(0).normal(size=(2, 5) if isinstance(theirs, torch.nn.Linear) else (1, 2, 5, 5))
    opts = torch.optim.SGD(theirs.parameters(), lr=0.1), st.optim.SGD(ours.parameters(), lr=0.1)
    for _ in range(3):  # a power-iteration step per training forward, through the gradient of 1 / sigma
        for m, o, lib in ((theirs, opts[0], torch), (ours, opts[1], st)):
            o.zero_grad()
            m(lib.tensor(x, dtype=lib.float32)).pow(2).sum().backward()
            o.step()
    theirs.eval(), ours.eval()
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-4, atol=1e-5, err_msg=k)
    np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_cached_parametrization_is_one_tensor_per_block_and_register_checks_the_chain() -> None:
    from shapetorch.nn.utils import parametrize

    class Twice(st.nn.Module):
        def forward(self, w):
            return w * 2

    class Flatten(st.nn.Module):
        def forward(self, w):
            return w.flatten()

    lin = st.nn.Linear(3, 2)
    parametrize.register_parametrization(lin, "weight", Twice())
    with parametrize.cached():
        a, b = lin.weight, lin.weight
        assert a is b
    assert lin.weight is not lin.weight
    # torch's safe-mode checks, for the first parametrization and for one appended to the chain
    for target in (st.nn.Linear(3, 2), lin):
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            parametrize.register_parametrization(target, "weight", Flatten())
    parametrize.register_parametrization(st.nn.Linear(3, 2), "weight", Flatten(), unsafe=True)
