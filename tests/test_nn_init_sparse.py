"""nn.init.sparse_ and the deprecated initialiser spellings (dirac, orthogonal, sparse, uniform, ...) against
torch: the zero pattern, the spread, the FutureWarning and its words, and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import shapetorch as st


@pytest.mark.parametrize(("shape", "sparsity", "std"), [((10, 6), 0.3, 0.01), ((7, 40), 0.5, 1.0), ((4, 3), 0.0, 0.1),
                                                        ((5, 2), 1.0, 0.1)])
def test_sparse_init_as_torch(shape, sparsity, std):
    ours = st.nn.init.sparse_(st.empty(*shape), sparsity, std)
    theirs = torch.nn.init.sparse_(torch.empty(*shape), sparsity, std)
    zs, zt = (ours.numpy() == 0).sum(axis=0), (theirs.numpy() == 0).sum(axis=0)
    np.testing.assert_array_equal(zs, zt)  # ceil(sparsity * rows) zeros in every column
    nonzero = ours.numpy()[ours.numpy() != 0]
    if nonzero.size > 100:
        assert 0.7 * std < nonzero.std() < 1.3 * std


def test_sparse_init_refuses_other_ranks_as_torch():
    for lib in (st, torch):
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            lib.nn.init.sparse_(lib.empty(2, 3, 4), 0.5)


@pytest.mark.parametrize(("old", "args"), [("uniform", ()), ("normal", ()), ("constant", (0.5,)),
                                           ("xavier_uniform", ()), ("xavier_normal", ()), ("kaiming_uniform", ()),
                                           ("kaiming_normal", ()), ("dirac", ()), ("orthogonal", ()),
                                           ("sparse", (0.5,))])
def test_deprecated_spellings_warn_as_torch(old, args):
    shape = (3, 3, 3) if old == "dirac" else (4, 3)
    messages = []
    for lib in (st, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = getattr(lib.nn.init, old)(lib.empty(*shape), *args)
        assert tuple(out.shape) == shape
        messages.append([str(x.message) for x in w if issubclass(x.category, FutureWarning)])
    assert messages[0] == messages[1] == [f"`nn.init.{old}` is now deprecated in favor of `nn.init.{old}_`."]
    st.manual_seed(4)
    a = getattr(st.nn.init, f"{old}_")(st.empty(*shape), *args)
    st.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        b = getattr(st.nn.init, old)(st.empty(*shape), *args)
    np.testing.assert_array_equal(a.numpy(), b.numpy())  # the old spelling is the same initialiser
