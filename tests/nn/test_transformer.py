"""Transformer layers and stacks against torch.nn with torch's weights copied in (float64,
eval mode so dropout is off): outputs, input gradients and every parameter gradient to
1e-6 over an option grid; state_dict keys, reprs, initialisation, warnings and errors."""

import itertools
import warnings

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
from ember.nn.modules import transformer as et

RNG = np.random.default_rng(3)
D, H, FF, N, S, T = 8, 2, 12, 2, 5, 4


def _close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _load(tm, em):
    state = {k: ember.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(state)


def _pair(name, **kw):
    """torch's and ember's module ``name`` built alike, torch's weights copied into ember's."""
    torch.manual_seed(0)

    def build(lib, nn):
        layer_kw = dict(
            dim_feedforward=FF,
            dropout=0.1,
            activation=kw.get("activation", "relu"),
            batch_first=kw.get("batch_first", False),
            norm_first=kw.get("norm_first", False),
            bias=kw.get("bias", True),
        )
        if callable(layer_kw["activation"]):
            layer_kw["activation"] = kw["activation"](lib)
        if name == "encoder_layer":
            return nn.TransformerEncoderLayer(D, H, **layer_kw)
        if name == "decoder_layer":
            return nn.TransformerDecoderLayer(D, H, **layer_kw)
        if name == "encoder":
            layer = nn.TransformerEncoderLayer(D, H, **layer_kw)
            return nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D), enable_nested_tensor=False)
        if name == "decoder":
            layer = nn.TransformerDecoderLayer(D, H, **layer_kw)
            return nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(D))
        return nn.Transformer(D, H, 1, 2, custom_encoder=None, **layer_kw)

    tm = build(torch, tnn).double().eval()
    em = build(ember, _EmberNN).double().eval()
    _load(tm, em)
    return tm, em


class _EmberNN:
    """The classes under test, by torch.nn's names (plus the layers they are built from)."""

    TransformerEncoderLayer = et.TransformerEncoderLayer
    TransformerDecoderLayer = et.TransformerDecoderLayer
    TransformerEncoder = et.TransformerEncoder
    TransformerDecoder = et.TransformerDecoder
    Transformer = et.Transformer
    LayerNorm = ember.nn.modules.normalization.LayerNorm


def _masks(kind, lq, ls, lib):
    """(attn mask, key padding mask, is_causal) of a grid entry, as ``lib`` tensors."""
    rng = np.random.default_rng(5)
    attn = kpm = None
    causal = None
    if kind == "bool":
        a = rng.random((lq, ls)) > 0.7
        a[:, 0] = False
        attn = lib.tensor(a)
    if kind == "float":
        attn = lib.tensor(rng.standard_normal((lq, ls)))
    if kind in ("causal", "causal_detected"):
        attn = lib.tensor(np.triu(np.full((lq, ls), -np.inf), 1))
        causal = True if kind == "causal" else None
    if kind == "kpm":
        k = np.zeros((N, ls), bool)
        k[1, -2:] = True
        kpm = lib.tensor(k)
    return attn, kpm, causal


def _seq(length, batch_first):
    return RNG.standard_normal((N, length, D) if batch_first else (length, N, D))


def _gelu_module(lib):
    return lib.nn.GELU() if lib is torch else ember.nn.modules.activation.GELU()


def _tanh(lib):
    return lib.tanh


GRID = list(
    itertools.product(
        ("encoder_layer", "decoder_layer", "encoder", "decoder", "transformer"),
        (False, True),  # batch_first
        (False, True),  # norm_first
        ("relu", "gelu", "callable"),
        ("none", "bool", "float", "kpm", "causal", "causal_detected"),
    )
)


@pytest.mark.parametrize("name, batch_first, norm_first, act, masks", GRID)
def test_transformer_modules_match_torch(name, batch_first, norm_first, act, masks):
    activation = {"relu": "relu", "gelu": _gelu_module, "callable": _tanh}[act]
    if act == "gelu" and name == "decoder_layer":
        activation = "gelu"
    tm, em = _pair(name, batch_first=batch_first, norm_first=norm_first, activation=activation)
    decoding = name != "encoder_layer" and name != "encoder"
    arrays = [_seq(T, batch_first), _seq(S, batch_first)] if decoding else [_seq(S, batch_first)]

    def run(lib, module, *xs):
        length = T if decoding else S
        attn, kpm, causal = _masks(masks, length, length, lib)
        if name == "encoder_layer":
            return module(xs[0], src_mask=attn, src_key_padding_mask=kpm, is_causal=bool(causal))
        if name == "encoder":
            return module(xs[0], mask=attn, src_key_padding_mask=kpm, is_causal=causal)
        mem_kpm = None if kpm is None else lib.tensor(np.eye(N, S, dtype=bool))
        kw = dict(tgt_mask=attn, tgt_key_padding_mask=kpm, memory_key_padding_mask=mem_kpm)
        if name == "decoder_layer":
            return module(*xs, tgt_is_causal=bool(causal), **kw)
        if name == "decoder":
            return module(*xs, tgt_is_causal=causal, **kw)
        src_kpm = None if kpm is None else lib.tensor(np.eye(N, S, dtype=bool)[:, ::-1].copy())
        return module(xs[1], xs[0], src_key_padding_mask=src_kpm, tgt_is_causal=causal, **kw)

    xe = [ember.tensor(a, requires_grad=True) for a in arrays]
    xt = [torch.tensor(a, requires_grad=True) for a in arrays]
    oe, ot = run(ember, em, *xe), run(torch, tm, *xt)
    _close(oe.detach().numpy(), ot.detach().numpy())
    u = RNG.standard_normal(tuple(ot.shape))
    (oe * ember.tensor(u)).sum().backward()
    (ot * torch.tensor(u)).sum().backward()
    for e, t in zip(xe, xt):
        _close(e.grad.numpy(), t.grad.numpy())
    named_t = dict(tm.named_parameters())
    named_e = dict(em.named_parameters())
    assert list(named_e) == list(named_t)
    for k, pt in named_t.items():
        assert named_e[k].grad is not None, k
        _close(named_e[k].grad.numpy(), pt.grad.numpy())


def test_unbatched_encoder_layer_and_bias_false():
    for kw in (dict(), dict(bias=False, norm_first=True)):
        tm, em = _pair("encoder_layer", **kw)
        x = RNG.standard_normal((S, D))
        oe = em(ember.tensor(x))
        ot = tm(torch.tensor(x, requires_grad=True))
        _close(oe.detach().numpy(), ot.detach().numpy())


def test_memory_mask_and_memory_is_causal():
    tm, em = _pair("decoder_layer", batch_first=True)
    tgt, mem = _seq(T, True), _seq(T, True)
    mask = np.triu(np.full((T, T), -np.inf), 1)
    outs = []
    for lib, m in ((ember, em), (torch, tm)):
        out = m(
            lib.tensor(tgt), lib.tensor(mem), memory_mask=lib.tensor(mask), memory_is_causal=True
        )
        outs.append(out.detach().numpy())
    _close(*outs)


def test_state_dict_keys_and_reprs_match_torch():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("encoder_layer", "decoder_layer", "encoder", "decoder", "transformer"):
            for kw in (dict(), dict(bias=False, activation=_gelu_module)):
                tm, em = _pair(name, **kw)
                assert list(em.state_dict()) == list(tm.state_dict())
                assert repr(em) == repr(tm)
        full_t, full_e = tnn.Transformer(), et.Transformer()
    assert list(full_e.state_dict()) == list(full_t.state_dict())
    assert repr(full_e) == repr(full_t)
    for (k, pe), (_, pt) in zip(full_e.named_parameters(), full_t.named_parameters()):
        assert tuple(pe.shape) == tuple(pt.shape), k


def test_transformer_initialisation():
    model = et.Transformer(d_model=16, nhead=2, num_encoder_layers=1, num_decoder_layers=1)
    w = model.encoder.layers[0].linear1.weight.detach().numpy()
    bound = np.sqrt(6.0 / (w.shape[0] + w.shape[1]))  # xavier_uniform_ on every matrix
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    attn = model.decoder.layers[0].multihead_attn
    assert np.all(attn.in_proj_bias.detach().numpy() == 0)
    layer = et.TransformerEncoderLayer(8, 2)
    clones = et.TransformerEncoder(layer, 2, enable_nested_tensor=False).layers
    a, b = (c.linear1.weight.detach().numpy() for c in clones)
    np.testing.assert_array_equal(a, b)  # deep copies of one layer, as torch's
    assert clones[0].linear1.weight is not clones[1].linear1.weight


def test_generate_square_subsequent_mask():
    for n in (1, 4):
        e = et.Transformer.generate_square_subsequent_mask(n)
        t = tnn.Transformer.generate_square_subsequent_mask(n)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
        assert e.dtype == ember.float32
    assert et.Transformer.generate_square_subsequent_mask(3, dtype=ember.float64).dtype == (
        ember.float64
    )


def test_enable_nested_tensor_warning_matches_torch():
    messages = {}
    for lib, mod in ((torch, tnn), (ember, et)):
        for kw in (dict(), dict(batch_first=True, norm_first=True), dict(batch_first=True)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                mod.TransformerEncoder(mod.TransformerEncoderLayer(8, 2, 16, **kw), 1)
            messages.setdefault(lib.__name__, []).append(
                [str(x.message) for x in w if x.category is UserWarning]
            )
    assert messages["ember"] == messages["torch"]
    assert messages["ember"][2] == []


def test_errors_match_torch():
    calls = [
        lambda mod, lib: mod.TransformerEncoderLayer(8, 2, activation="tanh"),
        lambda mod, lib: mod.Transformer(8, 2, 1, 1, 16)(lib.ones(3, 2, 8), lib.ones(3, 4, 8)),
        lambda mod, lib: mod.Transformer(8, 2, 1, 1, 16)(lib.ones(3, 2, 6), lib.ones(3, 2, 6)),
        lambda mod, lib: mod.TransformerEncoderLayer(8, 2)(
            lib.ones(3, 2, 8), src_mask=lib.ones(3, 3).long()
        ),
    ]
    for call in calls:
        with pytest.raises(Exception) as te:
            call(tnn, torch)
        with pytest.raises(type(te.value)) as ee:
            call(et, ember)
        assert str(ee.value) == str(te.value)


def test_training_mode_dropout_runs_and_backpropagates():
    ember.manual_seed(0)
    model = et.Transformer(8, 2, 1, 1, 16, dropout=0.5, batch_first=True)
    out = model(ember.randn(2, 5, 8), ember.randn(2, 4, 8))
    out.sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.eval()
    src, tgt = ember.randn(2, 5, 8), ember.randn(2, 4, 8)
    np.testing.assert_array_equal(
        model(src, tgt).detach().numpy(), model(src, tgt).detach().numpy()
    )
