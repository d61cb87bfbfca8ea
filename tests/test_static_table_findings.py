"""The runtime bugs the enumerated static=runtime table (test_typing_static_table.py) found, against torch.

The table checks the plugin against the runtime; these check the runtime's side of each finding against
torch: empty and 0-d edge cases of pools, convs, gather/scatter, index_select, cummax and reductions, and the
dtypes of some activations.
"""

from __future__ import annotations

import numpy as np
import pytest

import shapetorch as st
from _oracle import compare


def _f(lib):
    return st.nn.functional if lib is st else lib.nn.functional


def arr(*shape: int) -> tuple[np.ndarray, str]:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 1.5, "float32"


@pytest.mark.parametrize("shape,weight", [((0, 1, 1), (2, 1, 1)), ((0, 2, 5), (3, 2, 3)), ((0, 1, 3, 3), (2, 1, 2, 2))])
def test_conv_with_an_empty_batch(shape, weight):
    conv = "conv1d" if len(shape) == 3 else "conv2d"
    compare(lambda lib, x, w: getattr(_f(lib), conv)(x, w, padding=1), arr(*shape), arr(*weight))


@pytest.mark.parametrize("shape", [(0, 1, 1), (0, 2, 4), (1, 0), (1, 0, 1), (0, 1), (2, 3, 0)])
def test_max_pool_with_an_empty_dim(shape):
    """Only the batch may be empty (torch: 'with optional 0 dim batch size')."""
    compare(lambda lib, x: _f(lib).max_pool1d(x, 1, 1, 0), arr(*shape), codes="pool_error_empty_input")
    compare(lambda lib, x: _f(lib).avg_pool1d(x, 1, 1, 0), arr(*shape), codes="pool_error_empty_input")


@pytest.mark.parametrize("shape", [(1, 0), (2, 1, 0), (0, 1, 1), (0, 1)])
def test_adaptive_pools_of_an_empty_dim(shape):
    """The mean of an empty bin is NaN; there is no maximum of one."""
    compare(lambda lib, x: _f(lib).adaptive_avg_pool1d(x, 1), arr(*shape))
    compare(lambda lib, x: _f(lib).adaptive_max_pool1d(x, 1), arr(*shape), codes="reduction_error_empty_input")


def test_gather_and_scatter_with_a_0d_index():
    i = (np.array(1), "int64")
    compare(lambda lib, x, i: x.gather(0, i), arr(3), i)
    compare(lambda lib, x, i, s: x.scatter(0, i, s), arr(3), i, (np.array(5.0, np.float32), "float32"))
    compare(lambda lib, x, i, s: x.scatter_add(0, i, s), arr(3), i, (np.array(5.0, np.float32), "float32"))
    compare(lambda lib, x, i: x.gather(1, i), arr(2, 2), i, codes="index_error_rank_mismatch")


@pytest.mark.parametrize("n", [0, 1, 2])
def test_index_select_of_a_0d_input(n):
    compare(lambda lib, x, i: x.index_select(0, i), arr(), (np.zeros(n, np.int64), "int64"), codes="argument_error_invalid")


@pytest.mark.parametrize("shape,dim", [((0,), -5), ((0,), 3), ((2, 0), 5), ((2, 3), 2), ((2, 3), -3), ((), 0)])
def test_cummax_checks_no_dim_of_an_empty_input(shape, dim):
    compare(lambda lib, x: x.cummax(dim).indices, arr(*shape), codes="dimension_error_out_of_range")


@pytest.mark.parametrize("op", ["amax", "argmax", "amin", "argmin"])
@pytest.mark.parametrize("shape,dim", [((0,), 0), ((2, 0), 1), ((2, 0), 0), ((0, 3), None), ((), None)])
def test_reductions_with_no_value_over_an_empty_slice(op, shape, dim):
    kw = {} if dim is None else {"dim": dim}
    compare(lambda lib, x: getattr(x, op)(**kw), arr(*shape), codes="reduction_error_empty_input")


@pytest.mark.parametrize("name", ["leaky_relu", "elu", "hardtanh", "relu6"])
@pytest.mark.parametrize("dtype", ["int64", "bool", "float32"])
def test_activation_dtypes(name, dtype):
    """leaky_relu and elu take floats only; hardtanh and relu6 keep integers and refuse bool."""
    x = (np.arange(-2, 3) % 2 == 0 if dtype == "bool" else np.arange(-2, 3)).astype(np.bool_ if dtype == "bool" else dtype)
    compare(lambda lib, x: getattr(_f(lib), name)(x), (x, dtype), codes="method_dtype_not_supported_error")


def test_arange_and_factory_sizes():
    for args in ((1, 0), (0, 3, -1), (3, 0, -1)):
        compare(lambda lib: lib.arange(*args), codes="argument_error_invalid")
    compare(lambda lib: lib.zeros(2, -1), codes="reshape_error_invalid_size")
