"""The bad-input fuzzer's nn.functional, linalg and fft findings, fixed, each against torch: dtypes torch has no
kernel for (the dtype kinds of ``_rules.dtypes.DTYPE_KINDS``), 0-d and empty inputs, NaN in windows and losses,
and the checks torch's Python makes first. Both accept with the same result, or both raise, ours a coded
``ShapetorchError`` of torch's builtin class."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

import shapetorch as st
from _bad_input import assert_torch_verdict
from _oracle import assert_same


def _with(x: Any, at: tuple[int, ...], value: float) -> Any:
    y = x.clone()
    y[at] = value
    return y


def _cases(lib: Any) -> dict[str, Callable[[], Any]]:
    F = lib.nn.functional
    img = lib.arange(2 * 3 * 6 * 6, dtype=lib.float32).reshape(2, 3, 6, 6) / 7 - 9
    seq = lib.arange(2 * 3 * 8, dtype=lib.float32).reshape(2, 3, 8) / 5 - 2
    rows = lib.arange(12, dtype=lib.float32).reshape(3, 4) / 3 - 1
    holes = _with(_with(_with(img, (0, 0, 1, 1), float("nan")), (1, 2, 3, 3), float("inf")), (1, 2, 3, 4), -float("inf"))
    return {
        # dtype kinds: torch's kernels for these exist for some dtypes only
        "silu_int": lambda: F.silu(img.long()),
        "silu_complex": lambda: F.silu(img.to(lib.complex64)),
        "mish_complex": lambda: F.mish(img.to(lib.complex64)),
        "softplus_bool": lambda: F.softplus(img > 0),
        "softshrink_uint8": lambda: F.softshrink(img.abs().to(lib.uint8)),
        "prelu_int": lambda: F.prelu(img.long(), lib.tensor([0.25])),
        "layer_norm_complex": lambda: F.layer_norm(img.to(lib.complex64), (6,)),
        "group_norm_int": lambda: F.group_norm(img.long(), 3),
        "batch_norm_complex": lambda: F.batch_norm(img.to(lib.complex64), None, None, training=True),
        "adaptive_avg_pool2d_int": lambda: F.adaptive_avg_pool2d(img.long(), 2),
        "adaptive_avg_pool2d_empty_int": lambda: F.adaptive_avg_pool2d(img[:0].long(), 2),
        "adaptive_avg_pool3d_empty_int": lambda: F.adaptive_avg_pool3d(img[:0, None].long(), 2),
        "adaptive_max_pool1d_uint8": lambda: F.adaptive_max_pool1d(seq.abs().to(lib.uint8), 3),
        "adaptive_avg_pool_layer_complex": lambda: lib.nn.AdaptiveAvgPool2d(2)(img.to(lib.complex64)),
        "max_unpool2d_int": lambda: F.max_unpool2d(img.long(), lib.zeros(2, 3, 6, 6, dtype=lib.int64), 2),
        "grid_sample_uint8": lambda: F.grid_sample(img.abs().to(lib.uint8), lib.zeros(2, 2, 2, 2)),
        "nll_loss_int": lambda: F.nll_loss(rows.long(), lib.tensor([0, 1, 2])),
        "kl_div_int": lambda: F.kl_div(rows.long(), rows),
        "huber_loss_int_input": lambda: F.huber_loss(rows.long(), rows),
        "conv_transpose2d_uint8": lambda: F.conv_transpose2d(img.abs().to(lib.uint8), lib.ones(3, 2, 2, 2)),
        "conv3d_bool": lambda: F.conv3d(img[:, :, None] > 0, lib.ones(2, 3, 1, 2, 2)),
        "pdist_complex": lambda: F.pdist(rows.to(lib.complex64)),
        # int64 kernels where torch has them: avg_pool truncates the integer mean toward zero
        "avg_pool2d_int64": lambda: F.avg_pool2d((img * 3).long(), 2),
        "avg_pool2d_int64_padded": lambda: F.avg_pool2d((img * 3).long(), 3, 2, 1, ceil_mode=True),
        "avg_pool1d_int64_divisor": lambda: F.avg_pool2d((img * 3).long(), 2, divisor_override=3),
        "avg_pool2d_uint8": lambda: F.avg_pool2d(img.abs().to(lib.uint8), 2),
        "local_response_norm_int64": lambda: F.local_response_norm((img * 3).long(), 2),
        "interpolate_nearest_uint8": lambda: F.interpolate(img.abs().to(lib.uint8), scale_factor=2),
        "interpolate_nearest_int64": lambda: F.interpolate(img.long(), scale_factor=2),
        "interpolate_linear_uint8": lambda: F.interpolate(seq.abs().to(lib.uint8), scale_factor=2, mode="linear"),
        "upsample_bilinear_complex": lambda: F.upsample_bilinear(img.to(lib.complex64), scale_factor=2),
        # integer inputs keep their dtype, the numbers converted to it as torch's kernels do
        "threshold_int64": lambda: F.threshold((img * 3).long(), 1.5, 7.9),
        "threshold_uint8_negative": lambda: F.threshold(img.abs().to(lib.uint8), -1.0, 2.0),
        "threshold_bool": lambda: F.threshold(img > 0, 0.5, 2.0),
        "hinge_embedding_loss_int64": lambda: F.hinge_embedding_loss(
            (rows * 3).long(), lib.tensor([1.0, -1.0, 1.0, -1.0]).expand(3, 4), margin=8.4, reduction="none"),
        # losses that run in the promoted dtype of input and target
        "mse_loss_bool_input": lambda: F.mse_loss(rows > 0, rows),
        "smooth_l1_loss_int_input": lambda: F.smooth_l1_loss(rows.long(), rows),
        "cosine_similarity_int_x1": lambda: F.cosine_similarity((rows * 3).long(), rows),
        "cosine_similarity_ints": lambda: F.cosine_similarity(rows.long(), rows.long()),
        # torch's kernel checks: binary_cross_entropy's dtypes and range (NaN is outside it too)
        "bce_int_input": lambda: F.binary_cross_entropy(rows.long().clamp(0, 1), rows.clamp(0, 1)),
        "bce_nan": lambda: F.binary_cross_entropy(_with(rows.clamp(0, 1), (0, 0), float("nan")), rows.clamp(0, 1)),
        "bce_above_one": lambda: F.binary_cross_entropy(rows.clamp(0, 1) + 0.5, rows.clamp(0, 1)),
        # torch's Python raises ValueError: a target of another size, ranks it fills sizes from
        "bce_target_size": lambda: F.binary_cross_entropy(rows.clamp(0, 1), rows[:2].clamp(0, 1)),
        "bce_logits_target_size": lambda: F.binary_cross_entropy_with_logits(rows, rows[:2]),
        "nll_loss_batch_mismatch": lambda: F.nll_loss(rows, lib.tensor([0, 1])),
        "nll_loss_0d": lambda: F.nll_loss(rows[0, 0], lib.tensor([0, 1])),
        "adaptive_avg_pool2d_0d": lambda: F.adaptive_avg_pool2d(rows[0, 0], (2, 2)),
        "adaptive_max_pool2d_1d": lambda: F.adaptive_max_pool2d(rows[0], (2, 2)),
        "rms_norm_low_rank": lambda: F.rms_norm(rows, (1, 3, 4)),
        "instance_norm_one_spatial": lambda: F.instance_norm(img[:, :, :1, :1]),
        "max_unpool2d_output_size_out_of_bounds": lambda: F.max_unpool2d(
            img[:, :, :3, :3], lib.zeros(2, 3, 3, 3, dtype=lib.int64), 2, output_size=(9, 6)),
        "max_unpool2d_output_size_length": lambda: F.max_unpool2d(
            img[:, :, :3, :3], lib.zeros(2, 3, 3, 3, dtype=lib.int64), 2, output_size=(1, 6, 6)),
        "max_unpool2d_output_size_within": lambda: F.max_unpool2d(
            img[:, :, :3, :3], lib.zeros(2, 3, 3, 3, dtype=lib.int64), 2, output_size=(7, 6)),
        "pixel_shuffle_overflowing_factor": lambda: F.pixel_shuffle(img, 2**40),
        "multi_margin_loss_nan_p": lambda: F.multi_margin_loss(rows, lib.tensor([0, 1, 2]), p=float("nan")),
        "multi_margin_loss_float_p": lambda: F.multi_margin_loss(rows, lib.tensor([0, 1, 2]), p=2.0),
        # 0-d and empty inputs
        "cross_entropy_0d": lambda: F.cross_entropy(rows[0, 0], lib.tensor([0, 1])),
        "multilabel_soft_margin_loss_0d": lambda: F.multilabel_soft_margin_loss(rows[0, 0], rows[0]),
        "channel_shuffle_0d": lambda: F.channel_shuffle(rows[0, 0], 2),
        "soft_margin_loss_0d_input": lambda: F.soft_margin_loss(rows[0, 0], rows[0]),
        "ctc_loss_empty": lambda: F.ctc_loss(img[:0, 0], lib.ones(3, 2, dtype=lib.int64), [6, 6, 6], [2, 2, 2]),
        "multi_margin_loss_empty_classes": lambda: F.multi_margin_loss(rows[:, :0], lib.tensor([0, 1, 2])),
        "batch_norm_training": lambda: F.batch_norm(img, lib.zeros(3), lib.ones(3), lib.ones(3) * 2, lib.ones(3),
                                                    training=True, momentum=0.5),
        "batch_norm_eval": lambda: F.batch_norm(img, lib.zeros(3) + 1, lib.ones(3) * 3, training=False),
        "batch_norm_empty_batch": lambda: F.batch_norm(img[:0], None, None, lib.ones(3), lib.zeros(3), training=True),
        "group_norm_empty_batch": lambda: F.group_norm(img[:0], 3),
        "adaptive_max_pool2d_empty_batch": lambda: F.adaptive_max_pool2d(img[:0], 2, return_indices=True),
        "fractional_max_pool2d_empty_batch": lambda: F.fractional_max_pool2d(
            img[:0], 2, output_size=2, _random_samples=lib.zeros(0, 3, 2)),
        "fftshift_0d": lambda: lib.fft.fftshift(rows[0, 0]),
        "ifftshift_empty_dims": lambda: lib.fft.ifftshift(rows, dim=()),
        # NaN and inf in pooling windows and margin losses
        "avg_pool2d_nan_inf": lambda: F.avg_pool2d(holes, 2),
        "avg_pool2d_nan_inf_padded": lambda: F.avg_pool2d(holes, 3, 2, 1, ceil_mode=True),
        "adaptive_avg_pool2d_nan_inf": lambda: F.adaptive_avg_pool2d(holes, (4, 3)),
        "local_response_norm_nan": lambda: F.local_response_norm(holes, 2),
        "multi_margin_loss_nan": lambda: F.multi_margin_loss(_with(rows, (0, 3), float("nan")), lib.tensor([0, 1, 2])),
        "multilabel_margin_loss_nan": lambda: F.multilabel_margin_loss(
            _with(rows, (0, 3), float("nan")), lib.tensor([[0, 1, -1, 0], [2, -1, 0, 0], [3, 0, -1, 0]])),
        # target indices out of range
        "multi_margin_loss_target_out_of_range": lambda: F.multi_margin_loss(rows, lib.tensor([0, 4, 1])),
        "multilabel_margin_loss_target_below_minus_one": lambda: F.multilabel_margin_loss(
            rows, lib.tensor([[0, -2, -1, 0], [2, -1, 0, 0], [3, 0, -1, 0]])),
        # sizes of the wrong type: torch's parser (a TypeError), or its Python reading a flag as a truth value
        "avg_pool2d_bool_kernel": lambda: F.avg_pool2d(img, True),
        "adaptive_max_pool1d_bool_size": lambda: F.adaptive_max_pool1d(seq, True),
        "fractional_max_pool2d_float_kernel": lambda: F.fractional_max_pool2d(img, 2.0, output_size=2),
        "fractional_max_pool2d_int_flag": lambda: F.fractional_max_pool2d(
            img, 2, output_size=2, return_indices=1, _random_samples=lib.zeros(2, 3, 2)),
        "embedding_object_padding_idx": lambda: F.embedding(lib.tensor([0, 1]), rows, object()),
        "softmin_stacklevel": lambda: F.softmin(rows, 1, 3),
        # linalg
        "cond_empty": lambda: lib.linalg.cond(rows[:0]),
        "cond_object_p": lambda: lib.linalg.cond(rows[:3, :3], object()),
        "qr_object_mode": lambda: lib.linalg.qr(rows, object()),
        "vander_bool": lambda: lib.linalg.vander(rows[0] > 0),
        "solve_triangular_complex_a": lambda: lib.linalg.solve_triangular(
            (lib.eye(3) * 2 + rows[:, :3].triu()).to(lib.complex64), rows[:, :1], upper=True),
        "solve_triangular_float64_b": lambda: lib.linalg.solve_triangular(
            lib.eye(3) * 2 + rows[:, :3].triu(), rows[:, :1].double(), upper=True),
        "solve_triangular_complex_b": lambda: lib.linalg.solve_triangular(
            lib.eye(3) * 2 + rows[:, :3].triu(), rows[:, :1].to(lib.complex64) * (1 + 1j), upper=True),
        "triangular_solve_int_b": lambda: lib.triangular_solve(rows[:, :1].long(), lib.eye(3) * 2),
        "cholesky_ex_nan": lambda: lib.linalg.cholesky_ex(_with(lib.eye(3) * 2, (1, 1), float("nan"))).info,
        "tensorinv_ind_past_rank": lambda: lib.linalg.tensorinv(rows[0, 0], ind=3),
        # composite in torch: its out= may share memory with the input
        "ndtr_out_overlapping": lambda: _ndtr_overlapping(lib, rows),
    }


def _ndtr_overlapping(lib: Any, x: Any) -> Any:
    base = lib.cat([x, x[:1]])
    lib.special.ndtr(base[:-1], out=base[1:])
    return base


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_bad_input_as_torch(name: str) -> None:
    assert_torch_verdict(_cases(st)[name], _cases(torch)[name])


def test_avg_pool_of_nan_and_inf_differentiates_the_finite_values() -> None:
    """The NaN/inf path pools the finite values through the same op: their gradient is torch's."""
    x = torch.arange(36.0).reshape(1, 1, 6, 6)
    x[0, 0, 0, 0] = float("nan")
    grads = []
    for lib in (torch, st):
        t = lib.tensor(x.numpy(), requires_grad=True)
        out = lib.nn.functional.avg_pool2d(t, 2)
        out[..., 1:, 1:].sum().backward()  # the windows without the NaN
        grads.append(t.grad)
    assert_same(grads[1], grads[0])


def test_loss_target_size_error_is_both_classes() -> None:
    """torch's Python raises ValueError for a loss target of another size; ours is a ShapeError too."""
    with pytest.raises(ValueError) as info:
        st.nn.functional.binary_cross_entropy(st.ones(3) / 2, st.ones(2) / 2)
    assert isinstance(info.value, st.ShapeValueError) and isinstance(info.value, RuntimeError)
    assert info.value.code == "loss_error_target_shape_mismatch"
