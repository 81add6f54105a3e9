"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their one-step cells (torch.nn's).

The layers keep torch's parameters (``weight_ih_l{k}``, ``weight_hh_l{k}``,
``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` with ``proj_size``, ``*_reverse``
for the second direction; same shapes, same gate order), so a torch ``state_dict`` loads
as it is. Each layer and direction runs as one graph node (``ember.nn._rnn``); the cells
compose ordinary ops, as torch's do.
"""

from __future__ import annotations

import math
import numbers

from ... import _creation
from ..._overrides import warn as _warn
from ..._tensor import Tensor
from ..._tensor import device as _device
from .. import _rnn, init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_IMPLS = {
    "LSTM": _rnn.lstm,
    "GRU": _rnn.gru,
    "RNN_TANH": _rnn.rnn_tanh,
    "RNN_RELU": _rnn.rnn_relu,
}


def _factory(device, dtype) -> dict:
    if device is not None:
        _device(device)
    return {"dtype": dtype}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the parameters per layer and direction,
    their initialisation U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), argument checks,
    ``all_weights``, ``flatten_parameters`` (a no-op, as torch's on CPU) and the repr.

    Example:
        >>> from ember.nn.modules.rnn import RNNBase
        >>> RNNBase("LSTM", 3, 4, num_layers=2)
        RNNBase(3, 4, num_layers=2)
    """

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        kw = _factory(device, dtype)
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or not 0 <= dropout <= 1
            or isinstance(dropout, bool)
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            _warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got dropout="
                f"{dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden_size = proj_size if proj_size > 0 else hidden_size

        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes = [(gate_size, layer_input_size), (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_creation.empty(shape, **kw)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self) -> None:
        self._flat_weights = [
            getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names
        ]
        self.flatten_parameters()

    def __setattr__(self, attr, value) -> None:
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            # keep _flat_weights up to date when a weight is reassigned
            self._flat_weights[self._flat_weights_names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """A no-op: there are no cuDNN weight buffers to compact (as torch on CPU)."""

    def _apply(self, fn, recurse=True):
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()  # .to(), .double(), ... replace the parameters
        return ret

    def reset_parameters(self) -> None:
        """Re-draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _current_weights(self) -> list:
        """The parameters as currently set (also under ``functional_call``)."""
        return [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]

    def check_input(self, input: Tensor, batch_sizes) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(
                f"input must have {expected_input_dim} dimensions, got {input.dim()}"
            )
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size: tuple, msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def __setstate__(self, d) -> None:
        super().__setstate__(d)
        if "proj_size" not in d:
            self.proj_size = 0
        self._init_flat_weights()

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction, in torch's order."""
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    # -- the shared forward -------------------------------------------------------------

    def _zeros(self, n: int, batch: int, size: int, like: Tensor) -> Tensor:
        return _creation.zeros(n, batch, size, dtype=like.dtype)

    def _run(self, input, hx, name: str, lstm: bool):
        """torch's forward of RNN, GRU (``hx`` a tensor) and LSTM (``hx`` a pair)."""
        self._flat_weights = self._current_weights()
        num_directions = 2 if self.bidirectional else 1
        n_states = self.num_layers * num_directions
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        orig_input = input
        is_batched = True
        if isinstance(orig_input, PackedSequence):
            input, batch_sizes, sorted_indices, unsorted_indices = input
            max_batch_size = int(batch_sizes[0])
            if hx is None:
                hx = self._default_hidden(n_states, max_batch_size, real_hidden, input, lstm)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self._check_args(input, hx, batch_sizes, lstm)
        else:
            batch_sizes = sorted_indices = unsorted_indices = None
            if input.dim() not in (2, 3):
                what = "D instead" if name != "RNN" else "D tensor instead"
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}{what}")
            is_batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not is_batched:
                input = input.unsqueeze(batch_dim)
            if hx is not None:
                hx = self._check_hidden_dims(hx, is_batched, lstm)
            max_batch_size = input.size(0) if self.batch_first else input.size(1)
            if hx is None:
                hx = self._default_hidden(n_states, max_batch_size, real_hidden, input, lstm)
            self._check_args(input, hx, batch_sizes, lstm)
        impl = _IMPLS[self.mode]
        if batch_sizes is None:
            result = impl(
                input,
                hx,
                self._flat_weights,
                self.bias,
                self.num_layers,
                self.dropout,
                self.training,
                self.bidirectional,
                self.batch_first,
            )
        else:
            result = impl(
                input,
                batch_sizes,
                hx,
                self._flat_weights,
                self.bias,
                self.num_layers,
                self.dropout,
                self.training,
                self.bidirectional,
            )
        output = result[0]
        hidden = tuple(result[1:]) if lstm else result[1]
        if isinstance(orig_input, PackedSequence):
            packed = PackedSequence(output, batch_sizes, sorted_indices, unsorted_indices)
            return packed, self.permute_hidden(hidden, unsorted_indices)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if lstm else hidden.squeeze(1)
        return output, self.permute_hidden(hidden, unsorted_indices)

    def _default_hidden(self, n, batch, real_hidden, input, lstm: bool):
        h = self._zeros(n, batch, real_hidden if lstm else self.hidden_size, input)
        if lstm:
            return (h, self._zeros(n, batch, self.hidden_size, input))
        return h

    def _check_hidden_dims(self, hx, is_batched: bool, lstm: bool):
        if lstm:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError(
                        "For batched 3-D input, hx and cx should also be 3-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                    )
                return hx
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise RuntimeError(
                    "For unbatched 2-D input, hx and cx should also be 2-D but got "
                    f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
            return (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        if is_batched:
            if hx.dim() != 3:
                raise RuntimeError(
                    f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
                )
            return hx
        if hx.dim() != 2:
            raise RuntimeError(
                f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor"
            )
        return hx.unsqueeze(1)

    def _check_args(self, input, hx, batch_sizes, lstm: bool) -> None:
        self.check_forward_args(input, hx, batch_sizes)


class RNN(RNNBase):
    """A multi-layer Elman RNN, ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)``
    (or ReLU), over a ``(L, N, H_in)`` sequence (``(N, L, H_in)`` with ``batch_first``, or
    unbatched ``(L, H_in)``, or a ``PackedSequence``). Returns ``(output, h_n)``.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)``.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import RNN
        >>> rnn = RNN(10, 20, 2)
        >>> output, hn = rnn(ember.randn(5, 3, 10), ember.randn(2, 3, 20))
        >>> output.shape, hn.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, "RNN", lstm=False)


class LSTM(RNNBase):
    """A multi-layer LSTM over a ``(L, N, H_in)`` sequence (``(N, L, H_in)`` with
    ``batch_first``, unbatched ``(L, H_in)``, or a ``PackedSequence``). Returns
    ``(output, (h_n, c_n))``; with ``proj_size > 0`` the hidden state is projected by
    ``weight_hr_l{k}`` to ``proj_size`` features.

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)``.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import LSTM
        >>> lstm = LSTM(10, 20, 2)
        >>> output, (hn, cn) = lstm(ember.randn(5, 3, 10))
        >>> output.shape, hn.shape, cn.shape
        (torch.Size([5, 3, 20]), torch.Size([2, 3, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes) -> tuple:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden, batch_sizes) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input, hx=None):
        return self._run(input, hx, "LSTM", lstm=True)


class GRU(RNNBase):
    """A multi-layer GRU over a ``(L, N, H_in)`` sequence (``(N, L, H_in)`` with
    ``batch_first``, unbatched ``(L, H_in)``, or a ``PackedSequence``). Returns
    ``(output, h_n)``.

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)``.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import GRU
        >>> gru = GRU(10, 20, 2, batch_first=True)
        >>> output, hn = gru(ember.randn(3, 5, 10))
        >>> output.shape, hn.shape
        (torch.Size([3, 5, 20]), torch.Size([2, 3, 20]))
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._run(input, hx, "GRU", lstm=False)


# -- cells -------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the one-step cells share: ``weight_ih`` (chunks * hidden, input), ``weight_hh``
    (chunks * hidden, hidden), optional ``bias_ih`` / ``bias_hh``, all drawn from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

    Example:
        >>> from ember.nn.modules.rnn import RNNCellBase
        >>> RNNCellBase(3, 4, bias=False, num_chunks=2).weight_ih.shape
        torch.Size([8, 3])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device=None,
        dtype=None,
    ) -> None:
        kw = _factory(device, dtype)
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty((num_chunks * hidden_size, input_size), **kw))
        self.weight_hh = Parameter(_creation.empty((num_chunks * hidden_size, hidden_size), **kw))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        """Re-draw every weight and bias from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, input, hx, name: str, hx_name: str):
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected {hx_name} to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            hx = _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
        elif not is_batched:
            hx = hx.unsqueeze(0)
        return input, hx, is_batched


class RNNCell(RNNCellBase):
    """One Elman step, ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or ReLU), on
    ``(N, input_size)`` or unbatched ``(input_size,)`` input; ``hx`` defaults to zeros.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import RNNCell
        >>> cell = RNNCell(10, 20)
        >>> cell(ember.randn(3, 10)).shape
        torch.Size([3, 20])
    """

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device=None,
        dtype=None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, hx, "RNNCell", "hidden")
        if self.nonlinearity == "tanh":
            fn = _rnn.rnn_tanh_cell
        elif self.nonlinearity == "relu":
            fn = _rnn.rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = fn(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step on ``(N, input_size)`` or unbatched ``(input_size,)`` input: returns
    ``(h', c')``; ``hx = (h, c)`` defaults to zeros.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import LSTMCell
        >>> cell = LSTMCell(10, 20)
        >>> h, c = cell(ember.randn(3, 10))
        >>> h.shape, c.shape
        (torch.Size([3, 20]), torch.Size([3, 20]))
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if input.dim() not in (1, 2):
            raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = _creation.zeros(input.size(0), self.hidden_size, dtype=input.dtype)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        ret = _rnn.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not is_batched:
            ret = (ret[0].squeeze(0), ret[1].squeeze(0))
        return ret


class GRUCell(RNNCellBase):
    """One GRU step on ``(N, input_size)`` or unbatched ``(input_size,)`` input; ``hx``
    defaults to zeros.

    Example:
        >>> import ember
        >>> from ember.nn.modules.rnn import GRUCell
        >>> cell = GRUCell(10, 20)
        >>> cell(ember.randn(10)).shape
        torch.Size([20])
    """

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, hx, is_batched = self._prepare(input, hx, "GRUCell", "hidden")
        ret = _rnn.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
