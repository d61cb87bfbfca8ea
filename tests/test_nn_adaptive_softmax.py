"""AdaptiveLogSoftmaxWithLoss against torch with identical weights: (output, loss), gradients, log_prob,
predict, the state dict, repr and torch's refusals."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tests._nn_oracle import close, copy_state

import shapetorch as st

CONFIGS = [(16, 20, [4, 10], 4.0, False), (12, 30, [5, 12, 25], 2.0, True), (8, 6, [3], 4.0, False)]


def _pair(cfg):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(*cfg).double()
    sm = st.nn.AdaptiveLogSoftmaxWithLoss(*cfg).double()
    copy_state(sm, tm)
    return sm, tm


@pytest.mark.parametrize("cfg", CONFIGS)
def test_forward_and_gradients_as_torch(cfg):
    sm, tm = _pair(cfg)
    assert repr(sm) == repr(tm)
    assert list(sm.state_dict()) == list(tm.state_dict())
    rng = np.random.default_rng(len(cfg[2]))
    x = rng.normal(size=(9, cfg[0]))
    target = rng.integers(0, cfg[1], size=9)
    target[:3] = [0, cfg[1] - 1, cfg[2][0]]  # the shortlist, the last class, a cluster's first class
    xs, xt = st.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    os_, ot = sm(xs, st.tensor(target)), tm(xt, torch.tensor(target))
    assert type(os_).__name__ == type(ot).__name__ == "_ASMoutput" and os_._fields == ot._fields
    close(os_.output, ot.output, 1e-12, what="output")
    close(os_.loss, ot.loss, 1e-12, what="loss")
    os_.loss.backward()
    ot.loss.backward()
    close(xs.grad, xt.grad, 1e-12, what="grad of input")
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None or not p.grad.numpy().any(), name
        else:
            close(p.grad, tp[name].grad, 1e-12, what=f"grad of {name}")
    close(sm.log_prob(st.tensor(x)), tm.log_prob(torch.tensor(x)), 1e-12, what="log_prob")
    np.testing.assert_array_equal(sm.predict(st.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy())
    # unbatched: a 1-D input with a 0-d target
    a, b = sm(st.tensor(x[0]), st.tensor(target[0])), tm(torch.tensor(x[0]), torch.tensor(target[0]))
    close(a.output, b.output, 1e-12)
    close(a.loss, b.loss, 1e-12)
    for lib, m in ((st, sm), (torch, tm)):  # log_prob and predict take (N, in_features) only
        with pytest.raises(IndexError):
            m.log_prob(lib.tensor(x[0]))
        with pytest.raises(IndexError):
            m.predict(lib.tensor(x[0]))


def test_predict_with_rows_in_and_out_of_the_shortlist_as_torch():
    sm, tm = _pair((6, 12, [3, 7], 2.0, True))
    with torch.no_grad():  # a head bias that sends half of the rows to a cluster
        tm.head.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 3.0, -3.0]))
    copy_state(sm, tm)
    x = np.random.default_rng(5).normal(size=(40, 6)) * 3
    ps, pt = sm.predict(st.tensor(x)).numpy(), tm.predict(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(ps, pt)
    assert (pt < 3).any() and (pt >= 3).any()


def test_refusals_as_torch():
    for lib in (st, torch):
        for cutoffs in ([], [5, 3], [0, 4], [4, 20], [4, 4], [2.5]):
            with pytest.raises(ValueError, match="cutoffs should be"):
                lib.nn.AdaptiveLogSoftmaxWithLoss(8, 20, cutoffs)
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])
        for x, t, match in (((3, 4), [1, 2], "same size in the batch dimension"),
                            ((2, 4), [1, 12], r"Target values should be in \[0, 9\]"),
                            ((4,), [[1]], "0D or 1D target tensor expected"),
                            ((2, 4), 1, "0D target tensor expects 1D input tensors")):
            with pytest.raises(RuntimeError, match=match):
                m(lib.zeros(x), lib.tensor(t))
