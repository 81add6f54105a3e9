"""Recurrent networks and cells with torch's ATen entry points: ``lstm``, ``gru``,
``rnn_tanh``, ``rnn_relu`` (padded or packed, all layers and directions) and ``lstm_cell``,
``gru_cell``, ``rnn_tanh_cell``, ``rnn_relu_cell``.

Each layer and direction is one graph node, declared in ``ember._aten.nn_rnn`` (whose
docstring tells how it runs); the cells are written with ops (``F.linear`` and the gates),
so the ``*Cell`` modules' graphs end in torch's node names.
"""

from __future__ import annotations

import numpy as np

from .._aten import shape as _shape
from .._aten.nn_rnn import (
    GruLayerBackward0,
    LstmLayerBackward0,
    RnnReluLayerBackward0,
    RnnTanhLayerBackward0,
    _gru_step,
    _layer,
)
from .._tensor import Tensor
from . import functional as F

__all__ = [
    "GruLayerBackward0",
    "LstmLayerBackward0",
    "RnnReluLayerBackward0",
    "RnnTanhLayerBackward0",
    "gru",
    "gru_cell",
    "lstm",
    "lstm_cell",
    "rnn_relu",
    "rnn_relu_cell",
    "rnn_tanh",
    "rnn_tanh_cell",
]


# -- the cells (what the *Cell modules run) ------------------------------------------------


def _linear(x: Tensor, w: Tensor, b) -> Tensor:
    return F.linear(x, w, b)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step on a batch (torch.lstm_cell): ``(h', c')`` from ``hx = (h, c)``.

    Example:
        >>> import ember
        >>> from ember.nn._rnn import lstm_cell
        >>> h, c = lstm_cell(ember.ones(2, 3), (ember.zeros(2, 4), ember.zeros(2, 4)),
        ...                  ember.zeros(16, 3), ember.zeros(16, 4))
        >>> h.shape, c.shape
        (torch.Size([2, 4]), torch.Size([2, 4]))
    """
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    return hy, cy


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step on a batch (torch.gru_cell).

    Example:
        >>> import ember
        >>> from ember.nn._rnn import gru_cell
        >>> gru_cell(ember.ones(2, 3), ember.zeros(2, 4), ember.zeros(12, 3),
        ...          ember.zeros(12, 4)).shape
        torch.Size([2, 4])
    """
    return _gru_step(_linear(input, w_ih, b_ih), hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step ``tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (torch.rnn_tanh_cell).

    Example:
        >>> import ember
        >>> from ember.nn._rnn import rnn_tanh_cell
        >>> rnn_tanh_cell(ember.ones(1, 2), ember.zeros(1, 3), ember.ones(3, 2),
        ...               ember.ones(3, 3))
        tensor([[0.9640, 0.9640, 0.9640]])
    """
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman step ``relu(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (torch.rnn_relu_cell).

    Example:
        >>> import ember
        >>> from ember.nn._rnn import rnn_relu_cell
        >>> rnn_relu_cell(ember.ones(1, 2), ember.zeros(1, 3), ember.ones(3, 2),
        ...               ember.ones(3, 3))
        tensor([[2., 2., 2.]])
    """
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


# -- whole networks ----------------------------------------------------------------------------


def _split_weights(params, has_biases: bool, n_groups: int) -> list:
    """torch's flat weight list -> per layer and direction (w_ih, w_hh, b_ih, b_hh, w_hr)."""
    params = list(params)
    per = len(params) // n_groups
    groups = []
    for k in range(n_groups):
        p = params[k * per : (k + 1) * per]
        w_ih, w_hh = p[0], p[1]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        w_hr = p[-1] if per == (5 if has_biases else 3) else None
        groups.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return groups


def _network(mode, input, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
             bidirectional, batch_first):  # fmt: skip
    """All layers and directions: (output, h_n[, c_n]) as torch's ATen ops return them."""
    dirs = 2 if bidirectional else 1
    weights = _split_weights(params, has_biases, num_layers * dirs)
    states = [_shape.unbind(s, 0) for s in hx]  # per state kind: one tensor per layer/dir
    x = input
    if batch_sizes is None and batch_first:
        x = x.transpose(0, 1)
    finals = [[] for _ in hx]
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            res = _layer(mode, x, [s[k] for s in states], weights[k], batch_sizes, d == 1)
            outs.append(res[0])
            for lst, state in zip(finals, res[1:]):
                lst.append(state)
        x = outs[0] if dirs == 1 else _shape.cat(outs, -1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, training=True)
    if batch_sizes is None and batch_first:
        x = x.transpose(0, 1)
    return (x, *(_shape.stack(f, 0) for f in finals))


def _sizes(batch_sizes) -> tuple:
    return tuple(int(b) for b in np.asarray(batch_sizes._data).reshape(-1))


def _packed_call(args) -> bool:
    """torch's overloads: ``(data, batch_sizes, hx, params, ...)`` for packed input, else
    ``(input, hx, params, ...)``; batch_sizes is an integer tensor."""
    return (
        len(args) > 1
        and isinstance(args[1], Tensor)
        and args[1]._data.dtype.kind in "iu"
        and not isinstance(args[2], bool)
    )


def _dispatch(mode: str, args: tuple):
    if _packed_call(args):
        data, batch_sizes, hx, params, has_biases, num_layers, dropout, train, bidir = args
        hx = tuple(hx) if mode == "LSTM" else (hx,)
        return _network(mode, data, _sizes(batch_sizes), hx, params, has_biases, num_layers,
                        dropout, train, bidir, False)  # fmt: skip
    input, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
    hx = tuple(hx) if mode == "LSTM" else (hx,)
    return _network(mode, input, None, hx, params, has_biases, num_layers, dropout, train, bidir,
                    batch_first)  # fmt: skip


def lstm(*args):
    """A multi-layer LSTM over a sequence (torch.lstm): ``(output, h_n, c_n)``.

    Called as ``lstm(input, (h0, c0), params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first)`` or, packed, ``lstm(data, batch_sizes, (h0, c0), params,
    has_biases, num_layers, dropout, train, bidirectional)``; ``params`` is the flat list
    of weights in ``nn.LSTM``'s order.

    Example:
        >>> import ember
        >>> from ember.nn._rnn import lstm
        >>> ws = [ember.zeros(8, 3), ember.zeros(8, 2)]
        >>> out, h, c = lstm(ember.ones(5, 1, 3), (ember.zeros(1, 1, 2), ember.zeros(1, 1, 2)),
        ...                  ws, False, 1, 0.0, False, False, False)
        >>> out.shape, h.shape
        (torch.Size([5, 1, 2]), torch.Size([1, 1, 2]))
    """
    return _dispatch("LSTM", args)


def gru(*args):
    """A multi-layer GRU over a sequence (torch.gru): ``(output, h_n)``; arguments as
    :func:`lstm` with one hidden state tensor.

    Example:
        >>> import ember
        >>> from ember.nn._rnn import gru
        >>> ws = [ember.zeros(6, 3), ember.zeros(6, 2)]
        >>> gru(ember.ones(5, 1, 3), ember.zeros(1, 1, 2), ws, False, 1, 0.0, False, False,
        ...     False)[1]
        tensor([[[0., 0.]]])
    """
    return _dispatch("GRU", args)


def rnn_tanh(*args):
    """A multi-layer tanh Elman RNN (torch.rnn_tanh): ``(output, h_n)``.

    Example:
        >>> import ember
        >>> from ember.nn._rnn import rnn_tanh
        >>> ws = [ember.ones(2, 3), ember.zeros(2, 2)]
        >>> rnn_tanh(ember.zeros(4, 1, 3), ember.zeros(1, 1, 2), ws, False, 1, 0.0, False,
        ...          False, False)[1]
        tensor([[[0., 0.]]])
    """
    return _dispatch("RNN_TANH", args)


def rnn_relu(*args):
    """A multi-layer ReLU Elman RNN (torch.rnn_relu): ``(output, h_n)``.

    Example:
        >>> import ember
        >>> from ember.nn._rnn import rnn_relu
        >>> ws = [ember.ones(2, 3), ember.zeros(2, 2)]
        >>> rnn_relu(ember.ones(4, 1, 3), ember.zeros(1, 1, 2), ws, False, 1, 0.0, False,
        ...          False, False)[1]
        tensor([[[3., 3.]]])
    """
    return _dispatch("RNN_RELU", args)
