"""vmap against torch.vmap: batched functions, nested pytrees and kwargs, gradients and nesting, errors,
randomness."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import shapetorch as st
from _oracle import compare, make, values

# -- vmap against torch.vmap ------------------------------------------------------------------------------

VMAP_CASES = {
    "dot": (lambda lib: lambda a, b: (a * b).sum(), [(4, 3), (4, 3)], 0, 0),
    "in_dims_none": (lambda lib: lambda a, b: a @ b, [(5, 2, 3), (3, 4)], (0, None), 0),
    "in_dims_1_out_1": (lambda lib: lambda a: a.softmax(0) if lib is torch else lib.softmax(a, 0), [(3, 6)], 1, 1),
    "negative_dims": (lambda lib: lambda a, b: a - b.mean(), [(2, 3, 4), (4, 5)], (-1, 0), -1),
    "tuple_out": (lambda lib: lambda a: (a.sum(), a.cumsum(0)), [(3, 4)], 0, (0, 1)),
    "nested": (lambda lib: lambda a: lib.sort(a).values, [(2, 5)], 0, 0),
}


@pytest.mark.parametrize("case", sorted(VMAP_CASES))
def test_vmap_matches_torch(case):
    make_fn, in_shapes, in_dims, out_dims = VMAP_CASES[case]
    inputs = [(values(s, "float64", i), "float64") for i, s in enumerate(in_shapes)]
    compare(lambda lib, *xs: (torch.vmap if lib is torch else st.vmap)(make_fn(lib), in_dims, out_dims)(*xs), *inputs)


def test_vmap_nested_pytrees_and_kwargs():
    x = values((3, 2), "float64", 1)
    y = values((2, 3), "float64", 2)

    def fn(lib):
        return lambda d, scale=1.0: {"s": (d["a"] * d["b"]).sum() * scale, "p": [d["a"] + 1]}

    for lib, vm in ((torch, torch.vmap), (st, st.vmap)):
        out = vm(fn(lib), in_dims=({"a": 0, "b": 1},))({"a": lib.tensor(x), "b": lib.tensor(y)}, scale=2.0)
        if lib is torch:
            expected = out
        else:
            np.testing.assert_allclose(out["s"].numpy(), expected["s"].numpy())
            np.testing.assert_allclose(out["p"][0].numpy(), expected["p"][0].numpy())


def test_vmap_gradients_and_nesting():
    a_np = values((3, 4), "float64", 3)
    ours, theirs = make(a_np, "float64", requires_grad=True)
    out_o = st.vmap(st.vmap(lambda v: v.exp() * v))(ours).sum()
    out_t = torch.vmap(torch.vmap(lambda v: v.exp() * v))(theirs).sum()
    out_o.backward()
    out_t.backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)


def test_vmap_errors_like_torch():
    a, b = st.ones(3, 2), st.ones(4, 2)
    with pytest.raises(ValueError, match="same size"):
        st.vmap(lambda x, y: x + y)(a, b)
    with pytest.raises(ValueError, match="at least one input"):
        st.vmap(lambda x: x, in_dims=None)(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x: x, in_dims=2)(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x: x, in_dims=(0, 0))(a)
    with pytest.raises(ValueError):
        st.vmap(lambda x, n: x * n)(a, 2)
    with pytest.raises(ValueError, match="Tensors"):
        st.vmap(lambda x: 3)(a)
    with pytest.raises(RuntimeError):
        st.vmap(lambda x: x, randomness="sometimes")
    for fn, args in ((lambda x, y: x + y, (torch.ones(3, 2), torch.ones(4, 2))),
                     (lambda x, n: x * n, (torch.ones(3, 2), 2)), (lambda x: 3, (torch.ones(3),))):
        with pytest.raises(ValueError):
            torch.vmap(fn)(*args)


def test_vmap_randomness_same_replays_the_generator():
    st.manual_seed(0)
    same = st.vmap(lambda x: x + st.rand(()), randomness="same")(st.zeros(4))
    assert len(set(same.tolist())) == 1
    different = st.vmap(lambda x: x + st.rand(()), randomness="different")(st.zeros(4))
    assert len(set(different.tolist())) == 4
