"""The C loops of an LSTM step (``c/lstm.c``, which nn_rnn's LSTM op calls eagerly through
``eager_kernel``): equal to the op's NumPy code within float rounding on ordinary,
saturating and non-finite values; checked against it before use (and not used where they
disagree); the layers' values and gradients the same as torch's with them and without a C
compiler (the NumPy code, as in WebAssembly)."""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember._aten import _core
from ember._aten import nn_rnn as _rnn
from ember._compile import kernels, lowerings
from ember.nn.modules import rnn as ER
from ember.nn.utils import rnn as EU

torch = pytest.importorskip("torch")

needs_gcc = pytest.mark.skipif(
    bool(kernels.available()), reason="C loops need gcc and Python's headers"
)
NAMES = ("lstm_cell", "lstm_cell_grad")


@pytest.fixture
def fresh_kernels(monkeypatch):
    """Eager kernels looked up (and checked) anew in the test, forgotten after it."""
    monkeypatch.setattr(_core, "_eager_kernels", {})


@pytest.fixture
def no_compiler(monkeypatch):
    """As on a machine without gcc: no eager kernel, the NumPy code runs."""
    monkeypatch.setattr(kernels, "_AVAILABLE", "no C compiler (gcc)")
    monkeypatch.setattr(_core, "_eager_kernels", {})


def _module(dtype, hid: int):
    return lowerings._module("lstm.c", NAMES, np.dtype(dtype), H=hid)


def _step_arrays(rng, b: int, hid: int, dtype, awkward: bool):
    """A forward step's arguments: (acts, hw, c, cells, tanhc, h)."""
    acts = rng.standard_normal((b, 4 * hid)).astype(dtype)
    hw = rng.standard_normal((b, 4 * hid)).astype(dtype)
    c = (3 * rng.standard_normal((b, hid))).astype(dtype)
    if awkward:  # saturated gates, huge cells, infinities, a NaN, signed zeros
        acts[0, :5] = [40.0, -40.0, np.inf, -np.inf, -0.0]
        hw[0, :5] = 0
        c[1, :3] = [1e30, -np.inf, np.nan]
    outs = [np.empty((b, hid), dtype) for _ in range(3)]
    return [acts, hw, c, *outs]


def _grad_arrays(rng, b: int, hid: int, dtype, go: str):
    """A backward step's arguments: (dh, go, acts, tanhc, cprev, dc, d)."""
    dh = rng.standard_normal((b, hid)).astype(dtype)
    g = {
        "none": None,
        "rows": rng.standard_normal((b, hid)).astype(dtype),
        "broadcast": np.broadcast_to(np.asarray(1.5, dtype), (b, hid)),
        "row stride": rng.standard_normal((b, 2 * hid)).astype(dtype)[:, :hid],
    }[go]
    acts = np.tanh(rng.standard_normal((b, 4 * hid))).astype(dtype)
    tanhc = np.tanh(rng.standard_normal((b, hid))).astype(dtype)
    cprev = rng.standard_normal((b, hid)).astype(dtype)
    dc = rng.standard_normal((b, hid)).astype(dtype)
    return [dh, g, acts, tanhc, cprev, dc, np.empty((b, 4 * hid), dtype)]


def _close(mine, want, dtype) -> None:
    tol = 64 * np.finfo(dtype).eps
    np.testing.assert_allclose(mine, want, rtol=tol, atol=tol, equal_nan=True)


@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("b,hid,awkward", [(32, 128, False), (3, 5, False), (4, 7, True)])
def test_c_step_equals_the_numpy_code(dtype, b, hid, awkward):
    rng = np.random.default_rng(1)
    args = _step_arrays(rng, b, hid, dtype, awkward)
    mine = [a.copy() for a in args]
    with np.errstate(all="ignore"):
        _rnn._lstm_cell_array(*args)
    _module(dtype, hid).lstm_cell(*mine)
    for j in (0, 3, 4, 5):  # acts, cells, tanhc, h
        _close(mine[j], args[j], dtype)
    if awkward:
        assert np.isnan(mine[3][1, 2]) and np.isnan(mine[5][1, 2])


@needs_gcc
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("go", ["none", "rows", "broadcast", "row stride"])
@pytest.mark.parametrize("b,hid", [(32, 128), (3, 5)])
def test_c_step_gradient_equals_the_numpy_code(dtype, go, b, hid):
    rng = np.random.default_rng(2)
    args = _grad_arrays(rng, b, hid, dtype, go)
    mine = [a if j < 5 else a.copy() for j, a in enumerate(args)]
    _rnn._lstm_cell_grad_array(*args)
    _module(dtype, hid).lstm_cell_grad(*mine)
    for j in (5, 6):  # dc, d
        _close(mine[j], args[j], dtype)


@needs_gcc
def test_the_loops_reject_buffers_they_cannot_use_and_write_nothing():
    rng = np.random.default_rng(3)
    module = _module(np.float32, 8)
    good = _step_arrays(rng, 4, 8, np.float32, False)
    read_only = good[3].copy()
    read_only.flags.writeable = False
    for j, bad in [
        (0, good[0].astype(np.float64)),  # another dtype
        (3, np.empty((8, 4), np.float32).T),  # not C-contiguous
        (3, read_only),  # an output it cannot write
        (2, good[2][:3]),  # another batch
    ]:
        args = [a.copy() for a in good]
        args[j] = bad
        before = [a.copy() for a in args]
        with pytest.raises(TypeError, match="lstm_cell kernel: arguments"):
            module.lstm_cell(*args)
        for a, b in zip(args, before):
            np.testing.assert_array_equal(a, b)
    grad = _grad_arrays(rng, 4, 8, np.float32, "rows")
    grad[1] = rng.standard_normal((4, 16)).astype(np.float32)[:, ::2]  # strided columns
    with pytest.raises(TypeError, match="lstm_cell_grad kernel: arguments"):
        module.lstm_cell_grad(*grad)


@needs_gcc
def test_the_eager_kernel_is_checked_then_used(fresh_kernels):
    """The first call per shape runs both and writes the C results; a C loop whose results
    disagree with the NumPy code is not used again."""
    rng = np.random.default_rng(4)
    kernel = _core.eager_kernel("lstm_cell")
    args = _step_arrays(rng, 6, 16, np.float32, False)
    want = [a.copy() for a in args]
    _module(np.float32, 16).lstm_cell(*want)
    first = [a.copy() for a in args]
    assert kernel(*first) is True
    for a, b in zip(first, want):  # the C loop's results, bit for bit
        np.testing.assert_array_equal(a, b)
    again = [a.copy() for a in args]
    assert kernel(*again) is True
    for a, b in zip(again, want):
        np.testing.assert_array_equal(a, b)


@needs_gcc
def test_a_c_loop_that_disagrees_is_not_used(fresh_kernels, monkeypatch):
    def wrong(acts, hw, c, cells, tanhc, h):
        _rnn._lstm_cell_array(acts, hw, c, cells, tanhc, h)
        h += 1e-3

    monkeypatch.setitem(lowerings._LSTM_CELLS, "lstm_cell", (wrong, (0, 3, 4, 5), 4))
    kernel = _core.eager_kernel("lstm_cell")
    args = _step_arrays(np.random.default_rng(5), 6, 16, np.float32, False)
    first = [a.copy() for a in args]
    assert kernel(*first) is True  # the NumPy code's results (here: ``wrong``'s)
    want = [a.copy() for a in args]
    wrong(*want)
    for a, b in zip(first, want):
        np.testing.assert_array_equal(a, b)
    assert kernel(*[a.copy() for a in args]) is None  # from now on the caller's NumPy code


def test_without_a_compiler_there_is_no_kernel(no_compiler):
    assert all(_core.eager_kernel(n) is None for n in NAMES)


# -- whole layers, with and without the C loops ------------------------------------------------

CASES = [
    # (dtype, bidirectional, proj_size, packed lengths or None, batch_first)
    (np.float32, False, 0, None, False),  # W9's shape of case
    (np.float64, True, 0, None, True),
    (np.float64, False, 3, None, False),
    (np.float64, True, 0, [5, 2, 4], False),  # packed: shrinking batches each step
    (np.float32, True, 2, [3, 5, 1], True),
]


def _lstm_pair(dtype, bidirectional, proj):
    single = dtype == np.float32
    tdt, edt = (torch.float32, ember.float32) if single else (torch.float64, ember.float64)
    t = torch.nn.LSTM(4, 6, num_layers=2, bidirectional=bidirectional, proj_size=proj, dtype=tdt)
    e = ER.LSTM(4, 6, num_layers=2, bidirectional=bidirectional, proj_size=proj, dtype=edt)
    e.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, e


def _run(lib, module, x, lengths, batch_first):
    xs = lib.tensor(x, requires_grad=True)
    inp = xs
    if lengths is not None:
        mod = torch.nn.utils.rnn if lib is torch else EU
        inp = mod.pack_padded_sequence(xs, lengths, batch_first=batch_first, enforce_sorted=False)
    out, (h, c) = module(inp)
    out = out.data if lengths is not None else out
    ((out**2).mean() + h.sum() + (c * c).sum()).backward()
    grads = [xs.grad] + [p.grad for p in module.parameters()]
    return [a.detach().numpy().copy() for a in (out, h, c, *grads)]


@pytest.mark.parametrize("case", CASES, ids=str)
@pytest.mark.parametrize("compiler", ["gcc", "none"])
def test_layers_match_torch_with_and_without_the_c_loops(case, compiler, request):
    dtype, bidirectional, proj, lengths, batch_first = case
    if compiler == "gcc":
        if kernels.available():
            pytest.skip("C loops need gcc and Python's headers")
        request.getfixturevalue("fresh_kernels")
    else:
        request.getfixturevalue("no_compiler")
    t, e = _lstm_pair(dtype, bidirectional, proj)
    x = np.random.default_rng(6).standard_normal((3, 5, 4) if batch_first else (5, 3, 4))
    x = x.astype(dtype)
    got = _run(ember, e, x, lengths, batch_first)
    want = _run(torch, t, x, lengths, batch_first)
    tol = 2e-5 if dtype == np.float32 else 1e-10
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@needs_gcc
def test_the_c_loops_run_every_step_and_backward_is_reentrant(fresh_kernels, monkeypatch):
    """With gcc the NumPy step code is not called (the check runs its own copy), and two
    backward passes over a packed batch (several step shapes) give the same gradients."""
    calls = []
    for name in ("_lstm_cell_array", "_lstm_cell_grad_array"):
        fn = getattr(_rnn, name)
        monkeypatch.setattr(_rnn, name, lambda *a, fn=fn, name=name: calls.append(name) or fn(*a))
    _, e = _lstm_pair(np.float64, True, 0)
    x = ember.tensor(np.random.default_rng(7).standard_normal((5, 3, 4)), requires_grad=True)
    grads = []
    for _ in range(2):
        packed = EU.pack_padded_sequence(x, [5, 2, 4], enforce_sorted=False)
        out = e(packed)[0].data
        (g,) = ember.autograd.grad((out**2).sum(), x)
        grads.append(g.numpy())
    assert calls == []
    np.testing.assert_array_equal(grads[0], grads[1])


def test_without_a_compiler_the_numpy_code_runs_every_step(no_compiler, monkeypatch):
    calls = []
    fn = _rnn._lstm_cell_array
    monkeypatch.setattr(_rnn, "_lstm_cell_array", lambda *a: calls.append(1) or fn(*a))
    ER.LSTM(4, 6)(ember.randn(5, 3, 4))
    assert len(calls) == 5


def test_the_backward_scratch_buffer_never_reaches_a_gradient():
    """The gates gradient is a buffer reused between backward calls (``_scratch_buffer``):
    gradients of one call stay as they were after the next, of the same shape or another."""
    ember.manual_seed(0)
    lstm = ER.LSTM(4, 5, num_layers=2)
    grads = []
    for seq in (6, 6, 3):
        x = ember.randn(seq, 2, 4, requires_grad=True)
        for p in lstm.parameters():
            p.grad = None
        out, _ = lstm(x)
        (out * out).sum().backward()
        grads.append([x.grad.numpy().copy(), x.grad] + [p.grad for p in lstm.parameters()])
    first = grads[0]
    np.testing.assert_array_equal(first[1].numpy(), first[0])  # unchanged by later calls
    assert all(np.all(np.isfinite(g.numpy())) for g in first[2:])
    bufs = [g.numpy() for g in first[1:]]
    scratch = _rnn._scratch.buffer
    assert not any(np.shares_memory(b, scratch) for b in bufs)
