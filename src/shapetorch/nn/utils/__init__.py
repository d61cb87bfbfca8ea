"""``nn.utils``: gradient clipping, parameter/vector conversion, weight and spectral normalisation (hook-based and
as parametrizations), batch norm fusion, ``skip_init`` and conv weight memory formats. Magnitude pruning is
``nn.utils.prune``, imported on its own as in torch (``import torch.nn.utils.prune as prune``)."""

from __future__ import annotations

from . import parametrizations as parametrizations  # (reachable as attributes, as torch's)
from . import parametrize as parametrize
from . import rnn as rnn
from .clip_grad import clip_grad_norm as clip_grad_norm
from .clip_grad import clip_grad_norm_ as clip_grad_norm_
from .clip_grad import clip_grad_value_ as clip_grad_value_
from .clip_grad import clip_grads_with_norm_ as clip_grads_with_norm_
from .clip_grad import get_total_norm as get_total_norm
from .convert_parameters import parameters_to_vector as parameters_to_vector
from .convert_parameters import vector_to_parameters as vector_to_parameters
from .fusion import fuse_conv_bn_eval as fuse_conv_bn_eval
from .fusion import fuse_conv_bn_weights as fuse_conv_bn_weights
from .fusion import fuse_linear_bn_eval as fuse_linear_bn_eval
from .fusion import fuse_linear_bn_weights as fuse_linear_bn_weights
from .init import skip_init as skip_init
from .memory_format import convert_conv2d_weight_memory_format as convert_conv2d_weight_memory_format
from .memory_format import convert_conv3d_weight_memory_format as convert_conv3d_weight_memory_format
from .spectral_norm import remove_spectral_norm as remove_spectral_norm
from .spectral_norm import spectral_norm as spectral_norm
from .weight_norm import remove_weight_norm as remove_weight_norm
from .weight_norm import weight_norm as weight_norm
