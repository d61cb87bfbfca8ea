"""RNN, LSTM (with ``proj_size``), GRU and their cells, with torch's parameter names, layouts and gates.

Parameters per layer ``k`` and direction (``""`` or ``"_reverse"``): ``weight_ih_l{k}`` of shape
``(gates * hidden_size, layer_input)``, ``weight_hh_l{k}`` ``(gates * hidden_size, out_size)``,
``bias_ih_l{k}``, ``bias_hh_l{k}``, and for a projected LSTM ``weight_hr_l{k}`` ``(proj_size, hidden_size)``;
gates are stacked in torch's order (LSTM ``i, f, g, o``; GRU ``r, z, n``), so state dicts load either way.

The layers are written in tensor ops (one input projection per layer and direction, then a loop over
time), so they differentiate and run on every backend. A ``PackedSequence`` runs as its padded batch
with a per-step mask: a sequence's state stops changing after its last step, which is exactly torch's
packed semantics for both directions.
"""

from __future__ import annotations

import math
from typing import Any

from ..._autocast import AUTOCAST
from ..._errors import fail
from ..._rules.nn import rnn_cell_shape, rnn_shape
from ..._tensor import Tensor
from ...ops._common import check
from ...ops.activation import relu
from ...ops.conversion import where
from ...ops.creation import empty, tensor, zeros
from ...ops.joining import cat, stack
from ...ops.matmul import matmul_bias
from ...ops.recurrent import cell_fusable, gru_gates, gru_layer, lstm_gates, lstm_layer
from ...ops.unary import sigmoid, tanh
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from .module import Module

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _cell(mode: str, gi: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor, b_hh: Tensor | None,
          w_hr: Tensor | None) -> tuple[Tensor, Tensor | None]:
    """One step: ``gi`` is the input's projection (``x W_ih^T + b_ih``) for this step."""
    gh = F.linear(h, w_hh, b_hh)
    if mode in ("LSTM", "GRU") and cell_fusable(gi, gh, h, *((c,) if c is not None else ())):
        # the gates as one primitive (ops/recurrent.py): a few graph nodes per step instead of 15-18
        if mode == "GRU":
            return gru_gates(gi, gh, h), None
        assert c is not None
        h, c = lstm_gates(gi + gh, c)
        return (h.matmul(w_hr.t()) if w_hr is not None else h), c
    if mode == "LSTM":
        i, f, g, o = (gi + gh).chunk(4, -1)
        assert c is not None
        c = sigmoid(f) * c + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        return (h.matmul(w_hr.t()) if w_hr is not None else h), c
    if mode == "GRU":
        ir, iz, in_ = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r, z = sigmoid(ir + hr), sigmoid(iz + hz)
        n = tanh(in_ + r * hn)
        return (1 - z) * n + z * h, None
    pre = gi + gh
    return (tanh(pre) if mode == "RNN_TANH" else relu(pre)), None


class RNNBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if not isinstance(hidden_size, int) or hidden_size <= 0:
            raise ValueError("hidden_size must be greater than 0" if isinstance(hidden_size, int)
                             else f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than 0")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names: list[str] = []
        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else out_size * directions
                sfx = f"_l{layer}" + ("_reverse" if direction else "")
                shapes: dict[str, tuple[int, ...]] = {
                    f"weight_ih{sfx}": (gate_size, layer_input), f"weight_hh{sfx}": (gate_size, out_size)}
                if bias:
                    shapes |= {f"bias_ih{sfx}": (gate_size,), f"bias_hh{sfx}": (gate_size,)}
                if proj_size:
                    shapes[f"weight_hr{sfx}"] = (proj_size, hidden_size)
                for name, shape in shapes.items():
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(name)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, n) for n in self._flat_weights_names]

    def flatten_parameters(self) -> None:
        """cuDNN's contiguous weight buffer; nothing to do here."""

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _weights(self, layer: int, direction: int) -> tuple[Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]:
        sfx = f"_l{layer}" + ("_reverse" if direction else "")
        w_ih, w_hh = getattr(self, "weight_ih" + sfx), getattr(self, "weight_hh" + sfx)
        b_ih, b_hh, w_hr = (getattr(self, n + sfx, None) for n in ("bias_ih", "bias_hh", "weight_hr"))
        return w_ih, w_hh, b_ih, b_hh, w_hr

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, Any]:
        packed = isinstance(input, PackedSequence)
        lengths: list[int] | None = None
        sorted_indices = unsorted_indices = None
        if packed:
            sorted_indices, unsorted_indices = input.sorted_indices, input.unsorted_indices
            batch_sizes = [int(b) for b in input.batch_sizes.tolist()]
            x, _ = pad_packed_sequence(PackedSequence(input.data, input.batch_sizes))
            lengths = [sum(b > i for b in batch_sizes) for i in range(batch_sizes[0])]
            batched = True
        else:
            x = input
        weight = self._flat_weights[0]
        # torch checks the input's dtype against the weights' first (a ValueError), except under autocast
        if x.dtype != weight.dtype and not any(AUTOCAST.enabled.values()):
            fail("rnn_error_input_dtype", op=type(self).__name__, dtype=x.dtype.name, weight=weight.dtype.name)
        # The shape rule the mypy plugin runs on this call: the input's size and every state's shape.
        self._check_shapes(tuple(x.shape), hx, batch_first=self.batch_first and not packed)
        if not packed:
            batched = x.dim() == 3
            if not batched:
                x = x.unsqueeze(1)
            elif self.batch_first:
                x = x.transpose(0, 1)
        steps, batch = x.shape[0], x.shape[1]
        directions = 2 if self.bidirectional else 1
        h0, c0 = self._initial_states(hx, batch, batched, x, sorted_indices)
        mask = None
        if lengths is not None:
            mask = (tensor(list(range(steps))).unsqueeze(1) < tensor(lengths).unsqueeze(0)).unsqueeze(-1)
        h_n, c_n = [], []
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for direction in range(directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(layer, direction)
                k = layer * directions + direction
                h, c = h0[k], (c0[k] if c0 is not None else None)
                whole = mask is None and w_hr is None and steps and self.mode in ("LSTM", "GRU")
                biases = tuple(t for t in (b_ih, b_hh) if t is not None)
                if whole and self.mode == "LSTM" and c is not None \
                        and cell_fusable(layer_input, w_ih, h, c, w_hh, *biases):
                    # the input projection without b_ih: the layer adds it with b_hh, and their gradient, the same
                    # for both, is summed once (ops/recurrent.py)
                    gi_all = layer_input.matmul(w_ih.t())
                    if cell_fusable(gi_all, h, c, w_hh, *biases):  # (autocast may have cast the product)
                        seq, h, c = lstm_layer(gi_all, h, c, w_hh, b_ih, b_hh, bool(direction))
                        outputs.append(seq)
                        h_n.append(h)
                        c_n.append(c)
                        continue
                    if b_ih is not None:
                        gi_all = gi_all + b_ih
                else:
                    # the input projection of every step: one GEMM with the bias added in place (ops/matmul.py)
                    fused = None if b_ih is None else matmul_bias(layer_input, w_ih.t(), b_ih)
                    if fused is not None:
                        gi_all = fused
                    else:
                        gi_all = layer_input.matmul(w_ih.t())
                        if b_ih is not None:
                            gi_all = gi_all + b_ih
                if whole and self.mode == "GRU" \
                        and cell_fusable(gi_all, h, w_hh, *(t for t in (b_hh,) if t is not None)):
                    # the whole loop over time as one primitive (ops/recurrent.py)
                    seq, h = gru_layer(gi_all, h, w_hh, b_hh, bool(direction))
                    outputs.append(seq)
                    h_n.append(h)
                    continue
                order = range(steps - 1, -1, -1) if direction else range(steps)
                out: list[Tensor | None] = [None] * steps
                for t in order:
                    h_new, c_new = _cell(self.mode, gi_all[t], h, c, w_hh, b_hh, w_hr)
                    if mask is not None:
                        h_new = where(mask[t], h_new, h)
                        if c is not None and c_new is not None:
                            c_new = where(mask[t], c_new, c)
                    h, c = h_new, c_new
                    out[t] = h
                seq = stack(out)  # type: ignore[arg-type]
                if mask is not None:
                    seq = seq * mask.to(seq.dtype)
                outputs.append(seq)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            layer_input = outputs[0] if directions == 1 else cat(outputs, -1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        hidden = stack(h_n)
        cell = stack(c_n) if c_n else None
        if packed:
            assert lengths is not None
            if unsorted_indices is not None:
                hidden = hidden.index_select(1, unsorted_indices)
                cell = cell.index_select(1, unsorted_indices) if cell is not None else None
            data = pack_padded_sequence(layer_input, lengths).data
            output: Any = PackedSequence(data, input.batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = layer_input
            if not batched:
                output, hidden = output.squeeze(1), hidden.squeeze(1)
                cell = cell.squeeze(1) if cell is not None else None
            elif self.batch_first:
                output = output.transpose(0, 1)
        return output, ((hidden, cell) if self.mode == "LSTM" else hidden)

    def _check_shapes(self, shape: tuple[int, ...], hx: Any, batch_first: bool) -> None:
        name = type(self).__name__
        h0 = c0 = None
        if hx is not None and self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                fail("argument_error_invalid", op="LSTM", problem="Expected hx to be a tuple of (h_0, c_0)")
            h0, c0 = hx
        elif hx is not None:
            if not isinstance(hx, Tensor):
                fail("argument_error_invalid", op=name, problem=f"Expected hx to be a Tensor, got {type(hx).__name__}")
            h0 = hx
        check(rnn_shape, shape, self.input_size, self.hidden_size, self.num_layers, self.bidirectional, batch_first,
              self.proj_size, None if h0 is None else tuple(h0.shape), None if c0 is None else tuple(c0.shape), op=name)

    def _initial_states(self, hx: Any, batch: int, batched: bool, x: Tensor,
                        sorted_indices: Tensor | None) -> tuple[Tensor, Tensor | None]:
        directions = 2 if self.bidirectional else 1
        layers = self.num_layers * directions
        out_size = self.proj_size or self.hidden_size
        lstm = self.mode == "LSTM"
        if hx is None:
            h0 = zeros(layers, batch, out_size, dtype=x.dtype, device=x.device)
            c0 = zeros(layers, batch, self.hidden_size, dtype=x.dtype, device=x.device) if lstm else None
            return h0, c0
        h0, c0 = hx if lstm else (hx, None)  # their shapes were checked by _check_shapes
        if not batched:
            h0 = h0.unsqueeze(1)
            c0 = c0.unsqueeze(1) if c0 is not None else None
        if sorted_indices is not None:
            h0 = h0.index_select(1, sorted_indices)
            c0 = c0.index_select(1, sorted_indices) if c0 is not None else None
        return h0, c0


class RNN(RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, proj_size: int = 0) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, num_layers,
                         bias, batch_first, dropout, bidirectional, proj_size, device, dtype)


class LSTM(RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


class GRU(RNNBase):
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None, *, proj_size: int = 0) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device, dtype)


# -- cells -------------------------------------------------------------------------------------------------------


class RNNCellBase(Module):
    def __init__(self, mode: str, input_size: int, hidden_size: int, bias: bool, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode, self.input_size, self.hidden_size, self.bias = mode, input_size, hidden_size, bias
        gates = _GATES[mode] * hidden_size
        self.weight_ih = Parameter(empty(gates, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(gates, hidden_size, device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _step(self, input: Tensor, h: Tensor, c: Tensor | None) -> tuple[Tensor, Tensor | None]:
        # The shape rule the mypy plugin runs on this call: the input's size and the states' shapes.
        check(rnn_cell_shape, tuple(input.shape), self.input_size, self.hidden_size, tuple(h.shape),
              None if c is None else tuple(c.shape), op=type(self).__name__)
        gi = input.matmul(self.weight_ih.t())
        if self.bias_ih is not None:
            gi = gi + self.bias_ih
        return _cell(self.mode, gi, h, c, self.weight_hh, self.bias_hh, None)

    def _zeros(self, input: Tensor) -> Tensor:
        check(rnn_cell_shape, tuple(input.shape), self.input_size, self.hidden_size, op=type(self).__name__)
        shape = (input.shape[0], self.hidden_size) if input.dim() == 2 else (self.hidden_size,)
        return zeros(shape, dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size, bias,
                         device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, self._zeros(input) if hx is None else hx, None)[0]


class GRUCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        return self._step(input, self._zeros(input) if hx is None else hx, None)[0]


class LSTMCell(RNNCellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, device, dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        h, c = (self._zeros(input), self._zeros(input)) if hx is None else hx
        h, c_new = self._step(input, h, c)
        assert c_new is not None
        return h, c_new


__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]
