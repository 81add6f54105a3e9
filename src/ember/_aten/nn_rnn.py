"""Recurrent layers' ops: one op per layer and direction (and packing a padded batch).

A recurrent layer (one direction of one layer of ``nn.LSTM`` / ``nn.GRU`` / ``nn.RNN``) is
one ``defop`` node. Its forward projects every time step's input with one matmul
(``x @ W_ih^T`` for the whole sequence), then runs the time loop in NumPy: per step one
matmul with ``W_hh`` and the gates' elementwise work, saving the gate activations. Its
backward (BPTT) walks the steps back, again one matmul and the elementwise work per step,
collecting the gates' gradients of all steps so the weight gradients are one matmul each.
An LSTM step's elementwise work is one C loop each way where a C compiler is present
(``eager_kernel("lstm_cell")``, ``"lstm_cell_grad"``: ``_compile/c/lstm.c``, checked
against the NumPy code here on first use), else NumPy's. Padded ``(T, B, I)`` and
packed ``(N, I)`` inputs (with their ``batch_sizes``) run the same loop: at step ``t`` the
first ``batch_sizes[t]`` rows of the state are active, so each sequence's final state is
its state after its last step (first step in the reverse direction), as in torch.

Higher orders and forward mode differentiate the ``composite``, the same layer written
with ember ops (the steps below, which the cells of ``ember.nn._rnn`` share, so the ``*Cell``
modules' graphs end in torch's node names).

The public functions (``ember.nn._rnn``: ``lstm``, ``gru``, ``rnn_tanh``, ``rnn_relu`` and the
cells) run these nodes.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _creation
from .._tensor import Tensor
from . import shape as _shape
from ._core import COMPOSITE, defop, eager_kernel, is_raw, run

__all__ = [
    "GruLayerBackward0",
    "LstmLayerBackward0",
    "PackPaddedSequenceBackward0",
    "RnnReluLayerBackward0",
    "RnnTanhLayerBackward0",
]


# -- time steps ----------------------------------------------------------------------------------


def _steps(n_rows: int, batch: int, batch_sizes, reverse: bool) -> list:
    """``(start, active rows)`` of each time step in processing order. Padded inputs
    (``batch_sizes`` None) have ``n_rows // batch`` steps of ``batch`` rows."""
    if batch_sizes is None:
        steps = [(s, batch) for s in range(0, n_rows, batch)]
    else:
        steps, s = [], 0
        for b in batch_sizes:
            steps.append((s, b))
            s += b
    return steps[::-1] if reverse else steps


def _sigmoid(a: np.ndarray) -> np.ndarray:
    out = np.negative(a)
    np.exp(out, out=out)
    out += 1
    return np.reciprocal(out, out=out)


def _zeros_or_copy(g, shape, dtype) -> np.ndarray:
    return np.zeros(shape, dtype) if g is None else np.array(g, dtype=dtype, order="C")


def _add_bias(xw: np.ndarray, *biases) -> np.ndarray:
    for b in biases:
        if b is not None:
            xw += b
    return xw


# -- LSTM ----------------------------------------------------------------------------------------
#
# Inside the op the gates are reordered (i, f, o, g) so the three sigmoid gates are one block,
# and their rows of the weights are halved: one tanh over all gates then gives the sigmoids as
# 0.5 * tanh(x / 2) + 0.5. Gradients are computed in that order and put back in torch's
# (i, f, g, o) for the weights.


def _gate_order(hid: int) -> tuple:
    """(order, inverse): torch's (i, f, g, o) rows -> (i, f, o, g) and back."""
    i, f, g, o = (np.arange(k * hid, (k + 1) * hid) for k in range(4))
    order = np.concatenate([i, f, o, g])
    return order, np.argsort(order)


def _lstm_weights(w_ih, w_hh, b_ih, b_hh, hid: int):
    """The weights in the op's gate order, sigmoid rows halved."""
    order, _ = _gate_order(hid)
    scale = np.ones(4 * hid, w_ih.dtype)
    scale[: 3 * hid] = 0.5
    wi = w_ih[order] * scale[:, None]
    wh = w_hh[order] * scale[:, None]
    bias = None
    for b in (b_ih, b_hh):
        if b is not None:
            bias = b[order] if bias is None else bias + b[order]
    return wi, wh, None if bias is None else bias * scale


def _prev_rows(n: int, batch: int, batch_sizes, reverse: bool) -> np.ndarray:
    """For each row of the sequence, the row its step's previous state came from, in the
    stack ``[per-step states (N rows); initial state (batch rows)]``."""
    src = np.empty(n, np.int64)
    prev = None
    for s, b in _steps(n, batch, batch_sizes, reverse):
        rows = np.arange(b)
        if prev is None:
            src[s : s + b] = n + rows
        else:
            ps, pb = prev
            src[s : s + b] = np.where(rows < pb, ps + rows, n + rows)
        prev = (s, b)
    return src


def _lstm_cell_array(acts, hw, c, cells, tanhc, h) -> None:
    """One LSTM step's pointwise work into the op's buffers (the step's rows): ``acts``
    holds the step's input projection and becomes the tanh of it plus ``hw`` (``h W_hh^T``);
    then the new cell ``cells`` from the previous one ``c``, its tanh and ``h``."""
    hid = c.shape[1]
    h3 = 3 * hid
    acts += hw
    np.tanh(acts, out=acts)
    sig = np.multiply(acts[:, :h3], 0.5)  # the sigmoid gates i, f, o
    sig += 0.5
    np.multiply(sig[:, hid : 2 * hid], c, out=cells)
    cells += sig[:, :hid] * acts[:, h3:]
    np.tanh(cells, out=tanhc)
    np.multiply(sig[:, 2 * hid :], tanhc, out=h)


def _lstm_forward(x, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """One LSTM layer and direction on arrays: (output, h_n, c_n) and the saved steps.
    Each step's pointwise work is the compiler's C loop where it has one (``lstm_cell``,
    checked against ``_lstm_cell_array`` on first use), else the NumPy code."""
    x2 = x.reshape(-1, x.shape[-1])
    n, batch = x2.shape[0], hx.shape[0]
    hid, out_size = cx.shape[1], hx.shape[1]
    dt = x.dtype
    wi, wh, bias = _lstm_weights(w_ih, w_hh, b_ih, b_hh, hid)
    # tanh of the (halved) pre-activations, gates i, f, o, g: first every step's input
    # projection, which each step adds its h W_hh^T to (one (N, 4H) buffer, not two)
    acts = x2 @ np.ascontiguousarray(wi.T)
    if bias is not None:
        acts += bias
    wh_t = np.ascontiguousarray(wh.T)
    w_hr_t = None if w_hr is None else np.ascontiguousarray(w_hr.T)
    hw = np.empty((batch, 4 * hid), dt)  # each step's h W_hh^T (one buffer, kept in cache)
    cells = np.empty((n, hid), dt)
    tanhc = np.empty((n, hid), dt)
    hraw = np.empty((n, hid), dt) if w_hr is not None else None
    out = np.empty((n, out_size), dt)
    packed = batch_sizes is not None
    h, c = (hx.copy(), cx.copy()) if packed else (hx, np.ascontiguousarray(cx))
    kernel = eager_kernel("lstm_cell")
    for s, b in _steps(n, batch, batch_sizes, reverse):
        e = s + b
        hwb = hw[:b]
        np.matmul(h[:b] if packed else h, wh_t, out=hwb)
        cn, hn = cells[s:e], out[s:e] if w_hr is None else hraw[s:e]
        step = (acts[s:e], hwb, c[:b] if packed else c, cn, tanhc[s:e], hn)
        if kernel is None or kernel(*step) is None:
            _lstm_cell_array(*step)
        if w_hr is not None:
            hn = out[s:e]
            np.matmul(hraw[s:e], w_hr_t, out=hn)
        if packed:
            h[:b] = hn
            c[:b] = cn
        else:
            h, c = hn, cn
    if not packed:  # the final states are the last step's rows: copies, not views
        h, c = h.copy(), c.copy()
    return out.reshape(x.shape[:-1] + (out_size,)), h, c, acts, cells, tanhc, hraw


def _lstm_cell_grad_array(dh, go, acts, tanhc, cprev, dc, d) -> None:
    """One LSTM step's pointwise backward into the op's buffers (the step's rows): from the
    gradient of its ``h`` (``dh``, plus the output's ``go`` unless None) and of its cell
    (``dc``), the gradient ``d`` of the gates' tanh arguments (each gate's output gradient
    times ``1 - tanh^2`` of its halved pre-activation) and, into ``dc``, the previous
    cell's."""
    hid = dh.shape[1]
    h3 = 3 * hid
    sig = np.multiply(acts[:, :h3], 0.5)  # the sigmoid gates i, f, o
    sig += 0.5
    dht = dh if go is None else dh + go
    np.multiply(dht, tanhc, out=d[:, 2 * hid : h3])
    dct = np.square(tanhc)
    np.subtract(1, dct, out=dct)
    dct *= dht
    dct *= sig[:, 2 * hid :]
    dct += dc
    np.multiply(dct, acts[:, h3:], out=d[:, :hid])
    np.multiply(dct, cprev, out=d[:, hid : 2 * hid])
    np.multiply(dct, sig[:, :hid], out=d[:, h3:])
    fac = np.square(acts)
    np.subtract(1, fac, out=fac)
    d *= fac
    np.multiply(dct, sig[:, hid : 2 * hid], out=dc)


_scratch = threading.local()


def _scratch_buffer(shape: tuple, dtype) -> np.ndarray:
    """A buffer for the backward's gates gradient, kept from the thread's last call of the
    same shape: a fresh one costs a page fault per 4 KB (about 1 ms of W9's 3.2 MB, a tenth
    of its step). It never leaves ``_lstm_vjp``, and one is kept per thread at most."""
    buf = getattr(_scratch, "buffer", None)
    if buf is None or buf.shape != shape or buf.dtype != dtype:
        buf = _scratch.buffer = np.empty(shape, dtype)
    return buf


def _lstm_vjp(
    grads,
    input,
    hx,
    cx,
    w_ih,
    w_hh,
    b_ih,
    b_hh,
    w_hr,
    output,
    acts,
    cells,
    tanhc,
    hraw,
    batch_sizes,
    reverse,
    needs_input_grad,
):
    """BPTT through one LSTM layer on arrays: one matmul per step, the weights' gradients
    one matmul each over all steps (two for ``W_hh`` on a padded batch: the first step's
    previous state is ``hx``, the others' the output's rows, used where they are).

    Per step, ``e`` is each gate's output gradient times ``1 - tanh^2`` of its (halved)
    pre-activation, one factor for all four gates; the pre-activations' gradient is
    ``e * scale`` (1/4 for the sigmoid gates, 1 for g), folded into the weights. The step's
    pointwise work is the compiler's C loop ``lstm_cell_grad`` where it has one."""
    g_out, g_h, g_c = grads
    n, hid = tanhc.shape
    batch, out_size = hx.shape
    dt = acts.dtype
    order, inverse = _gate_order(hid)
    scale = np.ones(4 * hid, dt)
    scale[: 3 * hid] = 0.25
    wh = w_hh[order] * scale[:, None]
    go = None if g_out is None else g_out.reshape(n, out_size)
    if go is not None and go.strides[1] not in (0, go.itemsize):  # (rows or one value: C's)
        go = np.ascontiguousarray(go)
    packed = batch_sizes is not None
    dh = _zeros_or_copy(g_h, (batch, out_size), dt)
    dc = _zeros_or_copy(g_c, (batch, hid), dt)
    steps = _steps(n, batch, batch_sizes, reverse)
    if packed:  # each row's previous cell, gathered
        src = _prev_rows(n, batch, batch_sizes, reverse)
        cprev = np.concatenate([cells, cx])[src]
    else:
        c0 = np.ascontiguousarray(cx)
    dgates = _scratch_buffer((n, 4 * hid), dt)
    dproj = np.empty((n, out_size), dt) if w_hr is not None else None
    kernel = eager_kernel("lstm_cell_grad")
    for k in range(len(steps) - 1, -1, -1):
        s, b = steps[k]
        e = s + b
        if packed:
            cp = cprev[s:e]
        else:
            cp = c0 if k == 0 else cells[steps[k - 1][0] : steps[k - 1][0] + b]
        dhb = dh[:b] if packed else dh
        gt = None if go is None else go[s:e]
        if w_hr is not None:
            dht = dhb if gt is None else dhb + gt
            dproj[s:e] = dht
            dhb, gt = dht @ w_hr, None
        d = dgates[s:e]
        step = (dhb, gt, acts[s:e], tanhc[s:e], cp, dc[:b] if packed else dc, d)
        if kernel is None or kernel(*step) is None:
            _lstm_cell_grad_array(*step)
        np.matmul(d, wh, out=dh[:b] if packed else dh)
    res = [None] * 8
    if needs_input_grad[0]:
        res[0] = (dgates @ (w_ih[order] * scale[:, None])).reshape(input.shape)
    if needs_input_grad[1]:
        res[1] = dh
    if needs_input_grad[2]:
        res[2] = dc
    if needs_input_grad[3]:
        res[3] = ((dgates.T @ input.reshape(n, -1)) * scale[:, None])[inverse]
    if needs_input_grad[4]:
        out2 = output.reshape(n, out_size)
        if packed:
            gw = dgates.T @ np.concatenate([out2, hx])[src]
        else:  # the steps after the first in processing order follow the output's rows
            first, rest, prev = (
                (slice(n - batch, n), slice(0, n - batch), slice(batch, n))
                if reverse
                else (slice(0, batch), slice(batch, n), slice(0, n - batch))
            )
            gw = dgates[first].T @ hx
            if n > batch:
                gw += dgates[rest].T @ out2[prev]
        res[4] = (gw * scale[:, None])[inverse]
    if needs_input_grad[5] or needs_input_grad[6]:
        db = (dgates.sum(0) * scale)[inverse]
        res[5] = db if needs_input_grad[5] else None
        res[6] = db if needs_input_grad[6] else None
    if needs_input_grad[7]:
        res[7] = dproj.T @ hraw
    return tuple(res)


def _lstm_step(xw_t, hx, cx, w_hh, w_hr):
    """One LSTM step with ember ops, from the step's projected input ``xw_t``."""
    gates = xw_t + hx.matmul(w_hh.t())
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    hy = o.sigmoid() * cy.tanh()
    if w_hr is not None:
        hy = hy.matmul(w_hr.t())
    return hy, cy


def _lstm_composite(input, hx, cx, w_ih, w_hh, b_ih, b_hh, w_hr, batch_sizes, reverse):
    """The LSTM layer written with ember ops (for higher orders and forward mode)."""
    xw = _project(input, w_ih, (b_ih, b_hh))

    def step(xw_t, state):
        return _lstm_step(xw_t, state[0], state[1], w_hh, w_hr)

    out, (h, c) = _loop(xw, (hx, cx), step, batch_sizes, reverse)
    return out.reshape(*input.shape[:-1], hx.shape[1]), h, c


LstmLayerBackward0 = defop(
    "LstmLayerBackward0",
    inputs=("input", "hx", "cx", "w_ih", "w_hh", "b_ih", "b_hh", "w_hr"),
    outputs=("output", "h_n", "c_n"),
    params=("batch_sizes", "reverse"),
    saves=("acts", "cells", "tanhc", "hraw"),
    forward=_lstm_forward,
    vjp=_lstm_vjp,
    composite=_lstm_composite,
    jvp=COMPOSITE,
)


# -- GRU -----------------------------------------------------------------------------------------


def _gru_forward(x, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse):
    """One GRU layer and direction on arrays: (output, h_n) and the saved steps."""
    n_in = x.shape[-1]
    x2 = x.reshape(-1, n_in)
    n, (batch, hid) = x2.shape[0], hx.shape
    dt = x.dtype
    xw = _add_bias(x2 @ w_ih.T, b_ih)
    w_hh_t = w_hh.T
    rz = np.empty((n, 2 * hid), dt)
    newg = np.empty((n, hid), dt)
    hwn = np.empty((n, hid), dt)  # W_hn h + b_hn, what the reset gate scales
    hprev = np.empty((n, hid), dt)
    out = np.empty((n, hid), dt)
    h = hx.copy()
    for s, b in _steps(n, batch, batch_sizes, reverse):
        e = s + b
        hp = h[:b]
        hprev[s:e] = hp
        hw = _add_bias(hp @ w_hh_t, b_hh)
        g = rz[s:e]
        np.add(xw[s:e, : 2 * hid], hw[:, : 2 * hid], out=g)
        g[...] = _sigmoid(g)
        hwn[s:e] = hw[:, 2 * hid :]
        ng = newg[s:e]
        np.multiply(g[:, :hid], hw[:, 2 * hid :], out=ng)
        ng += xw[s:e, 2 * hid :]
        np.tanh(ng, out=ng)
        hn = hp - ng
        hn *= g[:, hid:]
        hn += ng
        out[s:e] = hn
        h[:b] = hn
    return out.reshape(x.shape[:-1] + (hid,)), h, rz, newg, hwn, hprev


def _gru_vjp(
    grads,
    input,
    hx,
    w_ih,
    w_hh,
    b_ih,
    b_hh,
    rz,
    newg,
    hwn,
    hprev,
    batch_sizes,
    reverse,
    needs_input_grad,
):
    """BPTT through one GRU layer on arrays."""
    g_out, g_h = grads
    n, hid = newg.shape
    batch = hx.shape[0]
    dt = newg.dtype
    go = None if g_out is None else g_out.reshape(n, hid)
    dh = _zeros_or_copy(g_h, (batch, hid), dt)
    dxw = np.empty((n, 3 * hid), dt)  # gradient of x W_ih^T + b_ih
    dhw = np.empty((n, 3 * hid), dt)  # gradient of h W_hh^T + b_hh
    for s, b in reversed(_steps(n, batch, batch_sizes, reverse)):
        e = s + b
        dht = dh[:b] if go is None else dh[:b] + go[s:e]
        r, z = rz[s:e, :hid], rz[s:e, hid:]
        ng, hp = newg[s:e], hprev[s:e]
        dn = dht * (1 - z)
        dn *= 1 - ng * ng
        dx, dw = dxw[s:e], dhw[s:e]
        np.multiply(dn * hwn[s:e], r * (1 - r), out=dx[:, :hid])
        np.multiply(dht * (hp - ng), z * (1 - z), out=dx[:, hid : 2 * hid])
        dx[:, 2 * hid :] = dn
        dw[:, : 2 * hid] = dx[:, : 2 * hid]
        np.multiply(dn, r, out=dw[:, 2 * hid :])
        dhp = dht * z
        dhp += dw @ w_hh
        dh[:b] = dhp
    res = [None] * 6
    if needs_input_grad[0]:
        res[0] = (dxw @ w_ih).reshape(input.shape)
    if needs_input_grad[1]:
        res[1] = dh
    if needs_input_grad[2]:
        res[2] = dxw.T @ input.reshape(n, -1)
    if needs_input_grad[3]:
        res[3] = dhw.T @ hprev
    if needs_input_grad[4]:
        res[4] = dxw.sum(0)
    if needs_input_grad[5]:
        res[5] = dhw.sum(0)
    return tuple(res)


def _gru_step(xw_t, hx, w_hh, b_hh):
    """One GRU step with ember ops, from the step's projected input (with ``b_ih``)."""
    hw = hx.matmul(w_hh.t())
    if b_hh is not None:
        hw = hw + b_hh
    i_r, i_z, i_n = xw_t.chunk(3, 1)
    h_r, h_z, h_n = hw.chunk(3, 1)
    resetgate = (i_r + h_r).sigmoid()
    inputgate = (i_z + h_z).sigmoid()
    newgate = (i_n + resetgate * h_n).tanh()
    return newgate + inputgate * (hx - newgate)


def _gru_composite(input, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse):
    """The GRU layer written with ember ops."""
    xw = _project(input, w_ih, (b_ih,))

    def step(xw_t, state):
        return (_gru_step(xw_t, state[0], w_hh, b_hh),)

    out, (h,) = _loop(xw, (hx,), step, batch_sizes, reverse)
    return out.reshape(*input.shape[:-1], hx.shape[1]), h


GruLayerBackward0 = defop(
    "GruLayerBackward0",
    inputs=("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh"),
    outputs=("output", "h_n"),
    params=("batch_sizes", "reverse"),
    saves=("rz", "newg", "hwn", "hprev"),
    forward=_gru_forward,
    vjp=_gru_vjp,
    composite=_gru_composite,
    jvp=COMPOSITE,
)


# -- Elman RNN (tanh / relu) ------------------------------------------------------------------


def _make_rnn_forward(relu: bool):
    def forward(x, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse):
        n_in = x.shape[-1]
        x2 = x.reshape(-1, n_in)
        n, (batch, hid) = x2.shape[0], hx.shape
        xw = _add_bias(x2 @ w_ih.T, b_ih, b_hh)
        w_hh_t = w_hh.T
        hprev = np.empty((n, hid), x.dtype)
        out = np.empty((n, hid), x.dtype)
        h = hx.copy()
        for s, b in _steps(n, batch, batch_sizes, reverse):
            e = s + b
            hp = h[:b]
            hprev[s:e] = hp
            hn = out[s:e]
            np.add(xw[s:e], hp @ w_hh_t, out=hn)
            if relu:
                np.maximum(hn, 0, out=hn)
            else:
                np.tanh(hn, out=hn)
            h[:b] = hn
        return out.reshape(x.shape[:-1] + (hid,)), h, hprev

    return forward


def _make_rnn_vjp(relu: bool):
    def vjp(grads, input, hx, w_ih, w_hh, b_ih, b_hh, output, hprev, batch_sizes, reverse,
            needs_input_grad):  # fmt: skip
        g_out, g_h = grads
        n, hid = hprev.shape
        batch = hx.shape[0]
        dt = hprev.dtype
        hs = output.reshape(n, hid)
        go = None if g_out is None else g_out.reshape(n, hid)
        dh = _zeros_or_copy(g_h, (batch, hid), dt)
        dpre = np.empty((n, hid), dt)
        for s, b in reversed(_steps(n, batch, batch_sizes, reverse)):
            e = s + b
            dht = dh[:b] if go is None else dh[:b] + go[s:e]
            hn = hs[s:e]
            d = dpre[s:e]
            if relu:
                np.multiply(dht, hn > 0, out=d)
            else:
                np.multiply(dht, 1 - hn * hn, out=d)
            dh[:b] = d @ w_hh
        res = [None] * 6
        if needs_input_grad[0]:
            res[0] = (dpre @ w_ih).reshape(input.shape)
        if needs_input_grad[1]:
            res[1] = dh
        if needs_input_grad[2]:
            res[2] = dpre.T @ input.reshape(n, -1)
        if needs_input_grad[3]:
            res[3] = dpre.T @ hprev
        if needs_input_grad[4] or needs_input_grad[5]:
            db = dpre.sum(0)
            res[4] = db if needs_input_grad[4] else None
            res[5] = db if needs_input_grad[5] else None
        return tuple(res)

    return vjp


def _make_rnn_composite(relu: bool):
    def composite(input, hx, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse):
        xw = _project(input, w_ih, (b_ih, b_hh))

        def step(xw_t, state):
            pre = xw_t + state[0].matmul(w_hh.t())
            return (pre.relu() if relu else pre.tanh(),)

        out, (h,) = _loop(xw, (hx,), step, batch_sizes, reverse)
        return out.reshape(*input.shape[:-1], hx.shape[1]), h

    return composite


def _rnn_node(name: str, relu: bool):
    return defop(
        name,
        inputs=("input", "hx", "w_ih", "w_hh", "b_ih", "b_hh"),
        outputs=("output", "h_n"),
        params=("batch_sizes", "reverse"),
        saves=("hprev",),
        forward=_make_rnn_forward(relu),
        vjp=_make_rnn_vjp(relu),
        composite=_make_rnn_composite(relu),
        jvp=COMPOSITE,
    )


RnnTanhLayerBackward0 = _rnn_node("RnnTanhLayerBackward0", relu=False)
RnnReluLayerBackward0 = _rnn_node("RnnReluLayerBackward0", relu=True)


# -- the composites' time loop ---------------------------------------------------------------


def _project(input: Tensor, w_ih: Tensor, biases: tuple) -> Tensor:
    """Every step's input projection ``x W_ih^T + biases`` as (N, gates)."""
    xw = input.reshape(-1, input.shape[-1]).matmul(w_ih.t())
    for b in biases:
        if b is not None:
            xw = xw + b
    return xw


def _loop(xw: Tensor, state: tuple, step, batch_sizes, reverse: bool):
    """Run ``step(xw_t, state) -> new state`` (whose first entry is the output) over the
    steps with ember ops; the outputs in time order as (N, hidden), and the final state."""
    n, batch = xw.shape[0], state[0].shape[0]
    outs = {}
    for s, b in _steps(n, batch, batch_sizes, reverse):
        active = tuple(x if b == batch else x[:b] for x in state)
        new = step(xw[s : s + b], active)
        outs[s] = new[0]
        if b == batch:
            state = tuple(new)
        else:
            state = tuple(_shape.cat([y, x[b:]], 0) for y, x in zip(new, state))
    return _shape.cat([outs[s] for s in sorted(outs)], 0), state


# -- one layer and direction, recorded (what the networks run) ---------------------------------

_NODES = {
    "LSTM": LstmLayerBackward0,
    "GRU": GruLayerBackward0,
    "RNN_TANH": RnnTanhLayerBackward0,
    "RNN_RELU": RnnReluLayerBackward0,
}


def _layer(mode, x, states, weights, batch_sizes, reverse):
    """One layer and direction, recorded as one node: (output, final states...)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    if mode == "LSTM":
        inputs = (x, states[0], states[1], w_ih, w_hh, b_ih, b_hh, w_hr)
    else:
        inputs = (x, states[0], w_ih, w_hh, b_ih, b_hh)
    arrays = tuple(None if t is None else t._data for t in inputs)
    return run(_NODES[mode], inputs, arrays, (batch_sizes, reverse))


# -- packed sequences (nn.utils.rnn.pack_padded_sequence) ---------------------------------------


def _long(values) -> Tensor:
    return Tensor._wrap(np.asarray(values, dtype=np.int64))


def _pack_forward(a: np.ndarray, index: tuple, shape: tuple, batch_first: bool):
    ti, bi = index
    return a[bi, ti] if batch_first else a[ti, bi]


def _pack_vjp(g, index: tuple, shape: tuple, batch_first: bool):
    ti, bi = index
    key = (bi, ti) if batch_first else (ti, bi)
    if is_raw(g):
        res = np.zeros(shape, g.dtype)
        res[key] = g
        return res
    res = _creation.zeros(shape, dtype=g.dtype)
    res[_long(key[0]), _long(key[1])] = g
    return res


def _pack_composite(input, index, shape, batch_first):
    ti, bi = index
    key = (bi, ti) if batch_first else (ti, bi)
    return input[_long(key[0]), _long(key[1])]


PackPaddedSequenceBackward0 = defop(
    "PackPaddedSequenceBackward0",
    params=("index", "shape", "batch_first"),
    forward=_pack_forward,
    vjp={"self": lambda g, index, shape, batch_first: _pack_vjp(g, index, shape, batch_first)},
    composite=_pack_composite,
    jvp=None,  # torch 2.13 has no forward AD for _pack_padded_sequence: NotImplementedError
)
