"""Recurrent ops: the per-layer LSTM / GRU / RNN nodes (through torch's ATen entry points
``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu``, padded and packed), the cells, and packing.

The layer entries are bidirectional: torch's float64 output is then ``CatBackward0`` and the
final states ``StackBackward0`` in both libraries (a unidirectional output's node is
ember's layer node, where torch shows ``StackBackward0`` / ``MkldnnRnnLayerBackward0``).
Packed entries take a constant ``batch_sizes`` tensor.
"""

import ember.nn._rnn as _ember_rnn
import ember.nn.utils.rnn as _ember_utils_rnn

from . import Op, S

BATCH_SIZES = [3, 2, 2, 1]  # lengths 4, 3, 1 packed: 8 rows


def _f(m):
    """The library's ATen-level recurrent functions (ember's live in ember.nn._rnn)."""
    return _ember_rnn if m.__name__ == "ember" else m


def _utils(m):
    return _ember_utils_rnn if m.__name__ == "ember" else m.nn.utils.rnn


def _sizes(m):
    return m.tensor(BATCH_SIZES)


def _lstm(m, x, h, c, *w, batch_first=False):
    return _f(m).lstm(x, (h, c), list(w), True, 1, 0.0, False, True, batch_first)


def _lstm_packed(m, x, h, c, *w):
    return _f(m).lstm(x, _sizes(m), (h, c), list(w), True, 1, 0.0, False, True)


def _net(name, m, x, h, *w, packed=False, bias=True):
    fn = getattr(_f(m), name)
    if packed:
        return fn(x, _sizes(m), h, list(w), bias, 1, 0.0, False, True)
    return fn(x, h, list(w), bias, 1, 0.0, False, True, False)


def _dir(g, i, p, bias=True, proj=0):
    """One direction's weight shapes: gates g * hidden p, input i (proj: hidden 3)."""
    hidden = 3 if proj else p
    ws = [S(g * hidden, i), S(g * hidden, proj or hidden)]
    if bias:
        ws += [S(g * hidden), S(g * hidden)]
    if proj:
        ws.append(S(proj, hidden))
    return ws


LSTM_W = _dir(4, 2, 3) * 2
LSTM_PROJ_W = _dir(4, 2, 3, proj=2) * 2
GRU_W = _dir(3, 2, 3) * 2
RNN_W = _dir(1, 2, 3) * 2
RNN_W_NOBIAS = _dir(1, 2, 3, bias=False) * 2

OPS = [
    # -- whole layers (both directions) ------------------------------------------------------
    Op(
        "lstm",
        lambda m, x, h, c, *w: _lstm(m, x, h, c, *w),
        (S(4, 2, 2), S(2, 2, 3), S(2, 2, 3), *LSTM_W),
    ),
    Op(
        "lstm_batch_first",
        lambda m, x, h, c, *w: _lstm(m, x, h, c, *w, batch_first=True),
        (S(2, 4, 2), S(2, 2, 3), S(2, 2, 3), *LSTM_W),
    ),
    Op(
        "lstm_proj",
        lambda m, x, h, c, *w: _lstm(m, x, h, c, *w),
        (S(3, 2, 2), S(2, 2, 2), S(2, 2, 3), *LSTM_PROJ_W),
    ),
    Op("lstm_packed", _lstm_packed, (S(8, 2), S(2, 3, 3), S(2, 3, 3), *LSTM_W)),
    Op("gru", lambda m, x, h, *w: _net("gru", m, x, h, *w), (S(4, 2, 2), S(2, 2, 3), *GRU_W)),
    Op(
        "gru_packed",
        lambda m, x, h, *w: _net("gru", m, x, h, *w, packed=True),
        (S(8, 2), S(2, 3, 3), *GRU_W),
    ),
    Op(
        "rnn_tanh",
        lambda m, x, h, *w: _net("rnn_tanh", m, x, h, *w),
        (S(4, 2, 2), S(2, 2, 3), *RNN_W),
    ),
    Op(
        "rnn_tanh_packed_nobias",
        lambda m, x, h, *w: _net("rnn_tanh", m, x, h, *w, packed=True, bias=False),
        (S(8, 2), S(2, 3, 3), *RNN_W_NOBIAS),
    ),
    Op(
        "rnn_relu",
        lambda m, x, h, *w: _net("rnn_relu", m, x, h, *w),
        (S(4, 2, 2), S(2, 2, 3), *RNN_W),
    ),
    Op(
        "rnn_relu_packed",
        lambda m, x, h, *w: _net("rnn_relu", m, x, h, *w, packed=True),
        (S(8, 2), S(2, 3, 3), *RNN_W),
    ),
    # -- cells (composed of ordinary ops, as torch's) -------------------------------------------
    Op(
        "lstm_cell",
        lambda m, x, h, c, wi, wh, bi, bh: _f(m).lstm_cell(x, (h, c), wi, wh, bi, bh),
        (S(2, 3), S(2, 4), S(2, 4), S(16, 3), S(16, 4), S(16), S(16)),
    ),
    Op(
        "gru_cell",
        lambda m, x, h, wi, wh, bi, bh: _f(m).gru_cell(x, h, wi, wh, bi, bh),
        (S(2, 3), S(2, 4), S(12, 3), S(12, 4), S(12), S(12)),
    ),
    Op(
        "rnn_tanh_cell",
        lambda m, x, h, wi, wh: _f(m).rnn_tanh_cell(x, h, wi, wh),
        (S(2, 3), S(2, 4), S(4, 3), S(4, 4)),
    ),
    Op(
        "rnn_relu_cell",
        lambda m, x, h, wi, wh, bi, bh: _f(m).rnn_relu_cell(x, h, wi, wh, bi, bh),
        (S(2, 3), S(2, 4), S(4, 3), S(4, 4), S(4), S(4)),
    ),
    # -- packing (torch has no forward AD for packing: forward=False) ---------------------
    Op(
        "pack_padded_sequence",
        lambda m, x: _utils(m).pack_padded_sequence(x, [4, 3, 1]).data,
        (S(4, 3, 2),),
        forward=False,
    ),
    Op(
        "pack_padded_sequence_batch_first",
        lambda m, x: _utils(m).pack_padded_sequence(x, [2, 4, 1], True, False).data,
        (S(3, 4, 2),),
        forward=False,
    ),
    Op(
        "pad_packed_sequence",
        lambda m, x: _utils(m).pad_packed_sequence(
            _utils(m).pack_padded_sequence(x, [4, 3, 1]), padding_value=0.5, total_length=5
        )[0],
        (S(4, 3, 2),),
        forward=False,
    ),
]
