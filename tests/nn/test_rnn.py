"""Recurrent layers against torch: RNN / LSTM / GRU over an option grid (layers,
directions, batch_first, proj_size, initial states, unbatched and packed inputs), the cells,
state_dict compatibility, reprs, errors, gradchecks of the layer ops, and nn.utils.rnn."""

import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _rnn
from ember.nn.modules import rnn as ER
from ember.nn.utils import rnn as EU

torch = pytest.importorskip("torch")
TU = torch.nn.utils.rnn

F64 = {"dtype": torch.float64}
E64 = {"dtype": ember.float64}
RNG = np.random.default_rng(7)


def _pair(name, *args, **kwargs):
    """The same module in both libraries, ember's weights copied from torch's through NumPy."""
    t = getattr(torch.nn, name)(*args, **kwargs, **F64)
    e = getattr(ER, name)(*args, **kwargs, **E64)
    keys = e.load_state_dict(
        {k: ember.tensor(v.detach().numpy()) for k, v in t.state_dict().items()}
    )
    assert not keys.missing_keys and not keys.unexpected_keys
    return t, e


def _leaf(lib, a):
    return lib.tensor(a, requires_grad=True)


def _flat(out):
    """Output tensors of a recurrent module's result (a PackedSequence contributes data)."""
    res = []
    for o in out if isinstance(out, tuple) else (out,):
        if isinstance(o, (TU.PackedSequence, EU.PackedSequence)):
            res.append(o.data)
        elif isinstance(o, tuple):
            res += list(o)
        else:
            res.append(o)
    return res


def _run(lib, module, x, hx, packed):
    xs = _leaf(lib, x)
    hs = None if hx is None else [_leaf(lib, h) for h in hx]
    inp = xs
    if packed is not None:
        lengths, batch_first = packed
        mod = TU if lib is torch else EU
        inp = mod.pack_padded_sequence(xs, lengths, batch_first=batch_first, enforce_sorted=False)
    state = None if hs is None else (tuple(hs) if len(hs) == 2 else hs[0])
    outs = _flat(module(inp, state))
    rng = np.random.default_rng(3)
    loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
    loss.backward()
    grads = [xs.grad] + ([] if hs is None else [h.grad for h in hs])
    return outs, grads


def _compare(t, e, x, hx=None, packed=None, tol=1e-6):
    t_outs, t_grads = _run(torch, t, x, hx, packed)
    e_outs, e_grads = _run(ember, e, x, hx, packed)
    assert len(t_outs) == len(e_outs)
    for a, b in zip(e_outs, t_outs):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(e_grads, t_grads):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)
    t_params = dict(t.named_parameters())
    for name, p in e.named_parameters():
        np.testing.assert_allclose(
            p.grad.numpy(), t_params[name].grad.numpy(), rtol=tol, atol=tol, err_msg=name
        )
    return e_outs, t_outs


def _states(mode, layers, dirs, batch, hidden, proj=0, unbatched=False):
    lead = (layers * dirs,) if unbatched else (layers * dirs, batch)
    h = RNG.standard_normal(lead + (proj or hidden,))
    if mode != "LSTM":
        return [h]
    return [h, RNG.standard_normal(lead + (hidden,))]


GRID = list(itertools.product([1, 2], [False, True], [False, True], [False, True]))


@pytest.mark.parametrize("layers,bidirectional,batch_first,with_state", GRID)
@pytest.mark.parametrize("mode", ["LSTM", "LSTM_PROJ", "GRU", "RNN_TANH", "RNN_RELU"])
def test_modules_match_torch(mode, layers, bidirectional, batch_first, with_state):
    name = {"LSTM_PROJ": "LSTM", "RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(mode, mode)
    kwargs = {"num_layers": layers, "bidirectional": bidirectional, "batch_first": batch_first}
    proj = 2 if mode == "LSTM_PROJ" else 0
    if proj:
        kwargs["proj_size"] = proj
    if mode == "RNN_RELU":
        kwargs["nonlinearity"] = "relu"
    t, e = _pair(name, 3, 4, **kwargs)
    seq, batch = 5, 3
    x = RNG.standard_normal((batch, seq, 3) if batch_first else (seq, batch, 3))
    hx = _states(name, layers, 2 if bidirectional else 1, batch, 4, proj) if with_state else None
    _compare(t, e, x, hx)


@pytest.mark.parametrize("name,kwargs", [
    ("LSTM", {}), ("LSTM", {"proj_size": 2, "num_layers": 2, "bidirectional": True}),
    ("GRU", {"bidirectional": True}), ("RNN", {"num_layers": 2}),
    ("RNN", {"nonlinearity": "relu", "bidirectional": True}),
])  # fmt: skip
@pytest.mark.parametrize("with_state", [False, True])
def test_unbatched_inputs(name, kwargs, with_state):
    t, e = _pair(name, 3, 4, batch_first=True, **kwargs)
    dirs = 2 if kwargs.get("bidirectional") else 1
    hx = None
    if with_state:
        hx = _states(
            name, kwargs.get("num_layers", 1), dirs, 1, 4, kwargs.get("proj_size", 0), True
        )
    e_outs, t_outs = _compare(t, e, RNG.standard_normal((5, 3)), hx)
    for a, b in zip(e_outs, t_outs):
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__ == "SqueezeBackward1"


@pytest.mark.parametrize("name,kwargs", [
    ("LSTM", {}), ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"proj_size": 2, "bidirectional": True}), ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}), ("RNN", {"bidirectional": True}),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
])  # fmt: skip
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_packed_sequences_with_unsorted_lengths(name, kwargs, batch_first, with_state):
    t, e = _pair(name, 3, 4, batch_first=batch_first, **kwargs)
    lengths = [3, 5, 1, 4]
    x = RNG.standard_normal((4, 5, 3) if batch_first else (5, 4, 3))
    dirs = 2 if kwargs.get("bidirectional") else 1
    hx = None
    if with_state:
        hx = _states(name, kwargs.get("num_layers", 1), dirs, 4, 4, kwargs.get("proj_size", 0))
    _compare(t, e, x, hx, packed=(lengths, batch_first))
    # the packed output keeps the input's batch order bookkeeping
    out = e(EU.pack_padded_sequence(ember.tensor(x), lengths, batch_first, False))[0]
    assert isinstance(out, EU.PackedSequence)
    assert out.sorted_indices.tolist() == [1, 3, 0, 2]
    assert out.unsorted_indices.tolist() == [2, 0, 3, 1]


def test_grad_fn_names():
    x = RNG.standard_normal((5, 2, 3))
    for name in ("LSTM", "GRU", "RNN"):
        for kwargs in ({"bidirectional": True}, {"num_layers": 2, "bidirectional": True}):
            t, e = _pair(name, 3, 4, **kwargs)
            t_out, e_out = _flat(t(torch.tensor(x))), _flat(e(ember.tensor(x)))
            assert [type(o.grad_fn).__name__ for o in e_out] == [
                type(o.grad_fn).__name__ for o in t_out
            ]
    # One direction: ember's output is the layer's node (torch: StackBackward0 in float64,
    # MkldnnRnnLayerBackward0 in float32); the final states are stacked as torch's.
    for name, node in [("LSTM", "LstmLayerBackward0"), ("GRU", "GruLayerBackward0")]:
        out, hidden = getattr(ER, name)(3, 4)(ember.randn(5, 2, 3))
        assert type(out.grad_fn).__name__ == node
        first = hidden[0] if name == "LSTM" else hidden
        assert type(first.grad_fn).__name__ == "StackBackward0"
    assert type(ER.RNN(3, 4)(ember.randn(5, 2, 3))[0].grad_fn).__name__ == "RnnTanhLayerBackward0"
    relu = ER.RNN(3, 4, nonlinearity="relu")(ember.randn(5, 2, 3))[0]
    assert type(relu.grad_fn).__name__ == "RnnReluLayerBackward0"


# -- cells ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,kwargs", [
    ("LSTMCell", {}), ("LSTMCell", {"bias": False}), ("GRUCell", {}), ("GRUCell", {"bias": False}),
    ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
])  # fmt: skip
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [False, True])
def test_cells_match_torch(name, kwargs, batched, with_state):
    t, e = _pair(name, 3, 4, **kwargs)
    lead = (2,) if batched else ()
    x = RNG.standard_normal(lead + (3,))
    hx = None
    if with_state:
        hx = [RNG.standard_normal(lead + (4,)) for _ in range(2 if name == "LSTMCell" else 1)]
    e_outs, t_outs = _compare(t, e, x, hx)
    for a, b in zip(e_outs, t_outs):
        assert type(a.grad_fn).__name__ == type(b.grad_fn).__name__


# -- parameters, state_dict, repr, errors ------------------------------------------------------


CONFIGS = [
    ("LSTM", (3, 4), {}),
    ("LSTM", (3, 4, 2), {"bias": False, "batch_first": True, "dropout": 0.5}),
    ("LSTM", (3, 4), {"proj_size": 2, "bidirectional": True, "num_layers": 2}),
    ("LSTM", (3, 4), {"proj_size": 2, "bias": False}),
    ("GRU", (3, 4), {"num_layers": 3, "bidirectional": True}),
    ("RNN", (3, 4, 2, "relu"), {}),
    ("RNN", (3, 4), {"nonlinearity": "tanh", "bias": False}),
    ("LSTMCell", (3, 4), {}),
    ("GRUCell", (3, 4), {"bias": False}),
    ("RNNCell", (3, 4), {"nonlinearity": "relu"}),
]


@pytest.mark.parametrize("name,args,kwargs", CONFIGS)
def test_state_dict_names_shapes_and_repr(name, args, kwargs):
    t = getattr(torch.nn, name)(*args, **kwargs)
    e = getattr(ER, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    t_sd, e_sd = t.state_dict(), e.state_dict()
    assert list(e_sd) == list(t_sd)
    assert [tuple(v.shape) for v in e_sd.values()] == [tuple(v.shape) for v in t_sd.values()]
    if hasattr(t, "all_weights"):
        assert [[tuple(w.shape) for w in ws] for ws in e.all_weights] == [
            [tuple(w.shape) for w in ws] for ws in t.all_weights
        ]
        assert e.flatten_parameters() is None
    bound = 1 / np.sqrt(4)
    for p in e.parameters():
        a = p.detach().numpy()
        assert a.dtype == np.float32 and np.all(np.abs(a) <= bound)


def test_initialisation_uses_embers_generator():
    ember.manual_seed(3)
    a = ER.LSTM(3, 4).weight_hh_l0.detach().numpy().copy()
    ember.manual_seed(3)
    b = ER.LSTM(3, 4).weight_hh_l0.detach().numpy()
    np.testing.assert_array_equal(a, b)
    assert a.std() > 0.1


def test_weights_reassigned_and_to_double():
    t, e = _pair("GRU", 3, 4)
    e.weight_hh_l0 = ember.nn.Parameter(ember.tensor(t.weight_hh_l0.detach().numpy() * 2))
    with torch.no_grad():
        t.weight_hh_l0.mul_(2)
    _compare(t, e, RNG.standard_normal((4, 2, 3)))
    e32 = ER.LSTM(3, 4)
    e32.double()
    assert e32(ember.randn(2, 1, 3, dtype=ember.float64))[0].dtype == ember.float64


def _errors(fn_t, fn_e):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(type(te.value)) as ee:
        fn_e()
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("name,args,kwargs", [
    ("LSTM", (3, 4), {"dropout": 1.5}),
    ("LSTM", (3, 4), {"proj_size": 4}),
    ("LSTM", (3, 4), {"proj_size": -1}),
    ("LSTM", (3, 0), {}),
    ("LSTM", (3, 4), {"num_layers": 0}),
    ("LSTM", (3, 4), {"bias": 1}),
    ("LSTM", (3.0, 4), {}),
    ("GRU", (3, 4), {"proj_size": 2}),
    ("RNN", (3, 4), {"nonlinearity": "gelu"}),
])  # fmt: skip
def test_constructor_errors(name, args, kwargs):
    _errors(lambda: getattr(torch.nn, name)(*args, **kwargs),
            lambda: getattr(ER, name)(*args, **kwargs))  # fmt: skip


def test_dropout_warning_single_layer():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        ER.LSTM(3, 4, dropout=0.2)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_forward_errors(name):
    t, e = _pair(name, 3, 4)
    lstm = name == "LSTM"
    cases = [
        (RNG.standard_normal((2, 2, 2, 3)), None),
        (RNG.standard_normal((5, 2, 2)), None),
        (RNG.standard_normal((5, 2, 3)), [np.zeros((1, 3, 4))] * (2 if lstm else 1)),
        (RNG.standard_normal((5, 2, 3)), [np.zeros((2, 4))] * (2 if lstm else 1)),
        (RNG.standard_normal((5, 3)), [np.zeros((1, 2, 4))] * (2 if lstm else 1)),
    ]
    for x, hx in cases:

        def call(lib, mod, x=x, hx=hx):
            state = None
            if hx is not None:
                hs = [lib.tensor(h) for h in hx]
                state = tuple(hs) if lstm else hs[0]
            return mod(lib.tensor(x), state)

        _errors(lambda: call(torch, t), lambda: call(ember, e))
    _errors(lambda: t(torch.ones(5, 2, 3)), lambda: e(ember.ones(5, 2, 3)))  # dtype mismatch


@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cell_errors(name):
    t, e = _pair(name, 3, 4)
    _errors(lambda: t(torch.ones(1, 2, 3, **F64)), lambda: e(ember.ones(1, 2, 3, **E64)))


# -- dropout between layers --------------------------------------------------------------------


def test_dropout_between_layers_in_training_only():
    t, e = _pair("LSTM", 3, 4, num_layers=2, dropout=0.5)
    x = RNG.standard_normal((5, 2, 3))
    e.eval()
    t.eval()
    _compare(t, e, x)
    e.train()
    ember.manual_seed(1)
    a = e(ember.tensor(x))[0]
    ember.manual_seed(1)
    b = e(ember.tensor(x))[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    e.eval()
    c = e(ember.tensor(x))[0]
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())
    a.sum().backward()
    assert e.weight_ih_l1.grad is not None


# -- the layer ops: gradcheck, double backward, forward mode -------------------------------------


def _t(*shape):
    return ember.tensor(RNG.standard_normal(shape), requires_grad=True)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_gradcheck(packed, reverse):
    sizes = ember.tensor([3, 2, 1])
    x = _t(6, 2) if packed else _t(3, 2, 2)
    batch = 3 if packed else 2
    h, c = _t(1 if not reverse else 2, batch, 2), _t(1 if not reverse else 2, batch, 3)
    dirs = 2 if reverse else 1
    ws = [_t(12, 2), _t(12, 2), _t(12), _t(12), _t(2, 3)] * dirs

    def fn(x, h, c, *ws):
        if packed:
            return _rnn.lstm(x, sizes, (h, c), list(ws), True, 1, 0.0, False, reverse)
        return _rnn.lstm(x, (h, c), list(ws), True, 1, 0.0, False, reverse, False)

    assert gradcheck(fn, (x, h, c, *ws))
    assert gradgradcheck(fn, (x, h, c, *ws))


@pytest.mark.parametrize("mode", ["gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("packed", [False, True])
def test_gru_rnn_layer_gradcheck(mode, packed):
    gates = 3 if mode == "gru" else 1
    sizes = ember.tensor([3, 2, 1])
    x = _t(6, 2) if packed else _t(3, 2, 2)
    h = _t(2, 3 if packed else 2, 3)
    ws = [_t(gates * 3, 2), _t(gates * 3, 3), _t(gates * 3), _t(gates * 3)] * 2
    fn_ = getattr(_rnn, mode)

    def fn(x, h, *ws):
        if packed:
            return fn_(x, sizes, h, list(ws), True, 1, 0.0, False, True)
        return fn_(x, h, list(ws), True, 1, 0.0, False, True, False)

    assert gradcheck(fn, (x, h, *ws))
    assert gradgradcheck(fn, (x, h, *ws))


def test_forward_mode_matches_torch():
    t, e = _pair("LSTM", 3, 4, bidirectional=True)
    x, v = RNG.standard_normal((4, 2, 3)), RNG.standard_normal((4, 2, 3))
    import torch.autograd.forward_ad as tfw

    import ember.autograd.forward_ad as efw

    with efw.dual_level():
        e_tan = efw.unpack_dual(e(efw.make_dual(ember.tensor(x), ember.tensor(v)))[0]).tangent
    with tfw.dual_level():
        t_tan = tfw.unpack_dual(t(tfw.make_dual(torch.tensor(x), torch.tensor(v)))[0]).tangent
    np.testing.assert_allclose(
        e_tan.detach().numpy(), t_tan.detach().numpy(), rtol=1e-10, atol=1e-12
    )


# -- nn.utils.rnn ------------------------------------------------------------------------------


def _seqs(lib, lengths, trail=(2,)):
    rng = np.random.default_rng(5)
    return [lib.tensor(rng.standard_normal((n,) + trail), requires_grad=True) for n in lengths]


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("side", ["right", "left"])
def test_pad_sequence(batch_first, side):
    res = []
    for lib, mod in ((torch, TU), (ember, EU)):
        seqs = _seqs(lib, [2, 4, 1])
        out = mod.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.5, padding_side=side)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        res.append((out, [s.grad for s in seqs]))
    (e, eg), (t, tg) = res[1], res[0]
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "CopySlices"
    for a, b in zip(eg, tg):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted,lengths", [(True, [4, 2, 2, 1]), (False, [2, 4, 1, 2])])
def test_pack_and_pad_round_trip(batch_first, enforce_sorted, lengths):
    x = RNG.standard_normal((4, 4, 2))
    res = []
    for lib, mod in ((torch, TU), (ember, EU)):
        xs = lib.tensor(x, requires_grad=True)
        p = mod.pack_padded_sequence(xs, lengths, batch_first, enforce_sorted)
        padded, lens = mod.pad_packed_sequence(p, batch_first, padding_value=2.0, total_length=6)
        padded.pow(2).sum().backward()
        res.append((p, padded, lens, xs.grad))
    (tp, tpad, tl, tg), (ep, epad, el, eg) = res
    np.testing.assert_array_equal(ep.data.detach().numpy(), tp.data.detach().numpy())
    assert ep.batch_sizes.tolist() == tp.batch_sizes.tolist()
    assert ep.batch_sizes.dtype == ember.int64
    for a, b in [
        (ep.sorted_indices, tp.sorted_indices),
        (ep.unsorted_indices, tp.unsorted_indices),
    ]:
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    np.testing.assert_array_equal(epad.detach().numpy(), tpad.detach().numpy())
    assert el.tolist() == tl.tolist() and el.dtype == ember.int64
    np.testing.assert_array_equal(eg.numpy(), tg.numpy())
    assert type(ep.data.grad_fn).__name__ == "PackPaddedSequenceBackward0"
    assert type(epad.grad_fn).__name__ == type(tpad.grad_fn).__name__


def test_pack_sequence_unpack_unpad():
    for enforce_sorted, lengths in ((True, [3, 2, 1]), (False, [1, 3, 2])):
        tp = TU.pack_sequence(_seqs(torch, lengths), enforce_sorted=enforce_sorted)
        ep = EU.pack_sequence(_seqs(ember, lengths), enforce_sorted=enforce_sorted)
        np.testing.assert_array_equal(ep.data.detach().numpy(), tp.data.detach().numpy())
        t_un, e_un = TU.unpack_sequence(tp), EU.unpack_sequence(ep)
        assert [s.shape[0] for s in e_un] == lengths
        for a, b in zip(e_un, t_un):
            np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    padded = RNG.standard_normal((3, 2, 2))
    t_parts = TU.unpad_sequence(torch.tensor(padded), torch.tensor([3, 1]))
    e_parts = EU.unpad_sequence(ember.tensor(padded), ember.tensor([3, 1]))
    for a, b in zip(e_parts, t_parts):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert repr(EU.PackedSequence(ember.tensor([1.0]), ember.tensor([1]))).startswith(
        "PackedSequence(data=tensor([1.]), batch_sizes=tensor([1]), sorted_indices=None"
    )
    assert EU.invert_permutation(ember.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert EU.invert_permutation(None) is None
    assert (
        ep.double().data.dtype == ember.float64 and ep.to(ember.float64).data.dtype == ember.float64
    )


def test_utils_errors():
    x_t, x_e = torch.zeros(4, 3, 2), ember.zeros(4, 3, 2)
    for lengths in ([1, 4, 2], [4, 2, 0], [4, 2]):
        _errors(lambda lengths=lengths: TU.pack_padded_sequence(x_t, lengths),
                lambda lengths=lengths: EU.pack_padded_sequence(x_e, lengths))  # fmt: skip
    _errors(lambda: TU.pack_padded_sequence(x_t, torch.tensor([[4, 2, 1]])),
            lambda: EU.pack_padded_sequence(x_e, ember.tensor([[4, 2, 1]])))  # fmt: skip
    tp, ep = TU.pack_padded_sequence(x_t, [4, 2, 1]), EU.pack_padded_sequence(x_e, [4, 2, 1])
    _errors(lambda: TU.pad_packed_sequence(tp, total_length=2),
            lambda: EU.pad_packed_sequence(ep, total_length=2))  # fmt: skip
    _errors(lambda: TU.pad_sequence([torch.ones(2)], padding_side="mid"),
            lambda: EU.pad_sequence([ember.ones(2)], padding_side="mid"))  # fmt: skip
    _errors(lambda: TU.pad_sequence([]), lambda: EU.pad_sequence([]))
    _errors(lambda: TU.pad_sequence([torch.ones(2, 3), torch.ones(2, 4)]),
            lambda: EU.pad_sequence([ember.ones(2, 3), ember.ones(2, 4)]))  # fmt: skip
    _errors(lambda: TU.pad_sequence(3), lambda: EU.pad_sequence(3))
