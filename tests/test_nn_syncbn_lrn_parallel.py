"""LPPool3d / lp_pool3d, adaptive_max_pool*_with_indices, SyncBatchNorm (single process), CrossMapLRN2d,
DataParallel (no CUDA: the module itself) and the deprecated Container, against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from tests._nn_oracle import close, compare_module

import shapetorch as st


@pytest.mark.parametrize(("norm_type", "kernel", "stride", "ceil"), [(2, 2, None, False), (3, (2, 1, 2), 1, False),
                                                                   (1.5, 2, 2, True)])
def test_lp_pool3d_as_torch(norm_type, kernel, stride, ceil):
    x = np.abs(np.random.default_rng(0).normal(size=(2, 3, 5, 4, 5))) + 0.1
    compare_module(st.nn.LPPool3d(norm_type, kernel, stride, ceil), torch.nn.LPPool3d(norm_type, kernel, stride, ceil),
                   [x])
    assert repr(st.nn.LPPool3d(norm_type, kernel, stride, ceil)) == repr(torch.nn.LPPool3d(norm_type, kernel, stride, ceil))
    close(st.nn.functional.lp_pool3d(st.tensor(x), norm_type, kernel, stride, ceil),
          torch.nn.functional.lp_pool3d(torch.tensor(x), norm_type, kernel, stride, ceil), 1e-10)


@pytest.mark.parametrize(("nd", "size", "out"), [(1, (2, 3, 7), 3), (2, (2, 3, 5, 6), (2, 4)), (3, (1, 2, 4, 5, 3), 2)])
def test_adaptive_max_pool_with_indices_as_torch(nd, size, out):
    x = np.random.default_rng(nd).normal(size=size)
    name = f"adaptive_max_pool{nd}d_with_indices"
    ys, iss = getattr(st.nn.functional, name)(st.tensor(x), out)
    yt, it = getattr(torch.nn.functional, name)(torch.tensor(x), out)
    close(ys, yt, 0)
    np.testing.assert_array_equal(iss.numpy(), it.numpy())
    assert iss.dtype == st.int64


def test_sync_batch_norm_single_process_as_torch():
    for shape in ((4, 3), (4, 3, 5), (2, 3, 2, 2, 2)):
        x = np.random.default_rng(len(shape)).normal(size=shape)
        sm, tm = st.nn.SyncBatchNorm(3).double(), torch.nn.SyncBatchNorm(3).double()
        assert repr(sm) == repr(tm)
        compare_module(sm, tm, [x])
        for k in ("running_mean", "running_var", "num_batches_tracked"):
            close(sm.state_dict()[k], tm.state_dict()[k], 1e-12, what=k)
        compare_module(sm.eval(), tm.eval(), [x])
    for lib in (st, torch):
        with pytest.raises(ValueError, match=r"expected at least 2D input \(got 1D input\)"):
            lib.nn.SyncBatchNorm(3)(lib.randn(3))


def test_convert_sync_batchnorm_as_torch():
    tm = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3),
                             torch.nn.Sequential(torch.nn.BatchNorm2d(3, affine=False)))
    sm = st.nn.Sequential(st.nn.Conv2d(2, 3, 1), st.nn.BatchNorm2d(3),
                          st.nn.Sequential(st.nn.BatchNorm2d(3, affine=False)))
    bn_weight = sm[1].weight
    tc, sc = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tm), st.nn.SyncBatchNorm.convert_sync_batchnorm(sm)
    assert repr(sc) == repr(tc)
    assert list(sc.state_dict()) == list(tc.state_dict())
    assert sc[1].weight is bn_weight  # the same parameters, as torch
    assert type(st.nn.SyncBatchNorm.convert_sync_batchnorm(st.nn.BatchNorm1d(2))) is st.nn.SyncBatchNorm


@pytest.mark.parametrize(("size", "alpha", "beta", "k"), [(3, 1e-4, 0.75, 1), (4, 0.5, 0.6, 2.0), (5, 1.0, 1.2, 0.5),
                                                        (2, 0.3, 0.75, 1), (6, 0.2, 0.5, 1.5)])
def test_cross_map_lrn2d_as_torch(size, alpha, beta, k):
    x = np.random.default_rng(size).normal(size=(2, 6, 3, 4))
    sm, tm = st.nn.CrossMapLRN2d(size, alpha, beta, k), torch.nn.CrossMapLRN2d(size, alpha, beta, k)
    assert repr(sm) == repr(tm)
    compare_module(sm, tm, [x], atol=1e-10)
    for lib in (st, torch):
        with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D instead."):
            lib.nn.CrossMapLRN2d(size)(lib.randn(6, 3, 4))


def test_data_parallel_runs_the_module_as_torch_without_cuda():
    tm, sm = torch.nn.DataParallel(torch.nn.Linear(3, 2)), st.nn.DataParallel(st.nn.Linear(3, 2))
    assert repr(sm) == repr(tm)
    assert list(sm.state_dict()) == list(tm.state_dict()) == ["module.weight", "module.bias"]
    assert isinstance(sm.module, st.nn.Linear)
    compare_module(sm.double(), tm.double(), [np.random.default_rng(0).normal(size=(4, 3))])


def test_container_is_deprecated_as_torch():
    for lib in (st, torch):
        with pytest.warns(FutureWarning, match="`nn.Container` is deprecated"):
            c = lib.nn.Container(a=lib.nn.ReLU(), b=lib.nn.Linear(2, 2))
        assert [n for n, _ in c.named_children()] == ["a", "b"]
    assert repr(c).replace("torch", "") == repr(st.nn.Container(a=st.nn.ReLU(), b=st.nn.Linear(2, 2)))
