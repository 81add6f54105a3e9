"""ember.onnx.export: exported models check with onnx and match ember's eager outputs when
run with onnxruntime."""

from __future__ import annotations

import importlib.util
import io
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load_example(name: str):
    if str(EXAMPLES) not in sys.path:  # the programs import their shared _common.py
        sys.path.insert(0, str(EXAMPLES))
    spec = importlib.util.spec_from_file_location(f"_ember_example_{name}", EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _flat(x):
    if isinstance(x, (tuple, list)):
        return [y for v in x for y in _flat(v)]
    return [x]


def _check(model, args, path, *, tol=1e-5, run_args=None, **kw):
    """Export, check, run with onnxruntime on ``run_args`` (default ``args``) and compare."""
    ember.onnx.export(model, args, str(path), **kw)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    run_args = args if run_args is None else run_args
    feeds = {i.name: a.numpy() for i, a in zip(sess.get_inputs(), _flat(list(run_args)))}
    got = sess.run(None, feeds)
    model.eval()
    with ember.no_grad():
        ref = _flat(model(*run_args))
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.shape == tuple(r.shape)
        np.testing.assert_allclose(g, r.numpy(), rtol=tol, atol=tol)
    return proto, sess


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 16)
        self.fc3 = nn.Linear(16, 3)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        x = self.drop(F.gelu(self.fc1(x)))
        x = F.silu(self.fc2(x)) + x
        return F.log_softmax(self.fc3(x), dim=-1)


def test_mlp_names_and_initializers(tmp_path):
    ember.manual_seed(0)
    model = MLP()
    model.train()
    x = ember.randn(4, 6)
    proto, sess = _check(
        model, (x,), tmp_path / "mlp.onnx", input_names=["features"], output_names=["logp"]
    )
    assert [i.name for i in sess.get_inputs()] == ["features"]
    assert [o.name for o in sess.get_outputs()] == ["logp"]
    inits = {t.name for t in proto.graph.initializer}
    assert inits == {f"fc{i}.{p}" for i in (1, 2, 3) for p in ("weight", "bias")}
    assert proto.opset_import[0].version == 20
    model.train()
    ember.onnx.export(model, (x,), str(tmp_path / "again.onnx"))
    assert model.training and model.drop.training  # the training flags are restored
    assert "/fc1/Gemm" in {n.name for n in proto.graph.node}


def test_default_names_file_object_and_opset(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2), nn.Sigmoid())
    buf = io.BytesIO()
    ember.onnx.export(model, (ember.randn(2, 3),), buf, opset_version=13)
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto)
    assert proto.opset_import[0].version == 13
    assert [i.name for i in proto.graph.input] == ["input"]
    assert [o.name for o in proto.graph.output] == ["output"]
    with pytest.raises(ValueError, match="opset"):
        ember.onnx.export(model, (ember.randn(2, 3),), buf, opset_version=9)


def test_digits_model(tmp_path):
    digits = _load_example("digits")
    ember.manual_seed(0)
    model = digits.build_model()
    x = ember.randn(5, 1, 8, 8)
    kw = dict(input_names=["image"], dynamic_axes={"image": {0: "batch"}, "output": {0: "batch"}})
    _check(model, (x,), tmp_path / "digits.onnx", **kw)
    proto, _ = _check(model, (x,), tmp_path / "d2.onnx", run_args=(ember.randn(2, 1, 8, 8),), **kw)
    out_dims = proto.graph.output[0].type.tensor_type.shape.dim
    assert [d.dim_param or d.dim_value for d in out_dims] == ["batch", 10]


class ConvBN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=4)
        self.bn2 = nn.BatchNorm2d(8)
        self.pool = nn.AvgPool2d(2)
        self.c1d = nn.Conv1d(8, 4, 3, padding="same")
        self.bn1d = nn.BatchNorm1d(4)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.act = nn.LeakyReLU(0.1)
        self.head = nn.Linear(4 + 8, 5)

    def forward(self, x):
        x = F.relu(self.bn1(self.c1(x)))
        x = self.act(self.bn2(self.c2(x)))
        x = self.pool(x)
        s = x.flatten(2)  # (B, 8, HW)
        s = self.bn1d(self.c1d(s)).mean(dim=-1)
        g = self.gap(x).flatten(1)
        g = F.max_pool2d(x, 2).amax(dim=(2, 3)) * 0.5 + g
        return self.head(ember.cat([s, g], dim=1)).softmax(-1)


def test_conv_batchnorm_eval(tmp_path):
    ember.manual_seed(0)
    model = ConvBN()
    for m in model.modules():  # non-trivial running statistics
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(ember.randn(m.num_features) * 0.1)
            m.running_var.copy_(ember.rand(m.num_features) + 0.5)
    x = ember.randn(2, 3, 16, 16)
    proto, _ = _check(model, (x,), tmp_path / "convbn.onnx", tol=1e-4)
    assert "bn1.running_mean" in {t.name for t in proto.graph.initializer}


class Block(nn.Module):
    """A GPT block with a tril causal-mask buffer (masked_fill) or SDPA."""

    def __init__(self, d, n_head, block_size, sdpa):
        super().__init__()
        self.n_head = n_head
        self.sdpa = sdpa
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)
        mask = ember.tril(ember.ones(block_size, block_size))
        self.register_buffer("mask", mask.view(1, 1, block_size, block_size))

    def attn(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        hs = C // self.n_head
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab=11, d=16, n_head=2, n_layer=2, block_size=8, sdpa=False):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block_size, d)
        self.blocks = nn.ModuleList([Block(d, n_head, block_size, sdpa) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        b, t = idx.size()
        pos = ember.arange(0, t, dtype=ember.long)
        x = self.tok(idx) + self.pos(pos)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln_f(x))


@pytest.mark.parametrize("sdpa", [False, True])
def test_small_gpt_dynamic_batch_and_sequence(tmp_path, sdpa):
    ember.manual_seed(0)
    model = GPT(sdpa=sdpa)
    idx = ember.randint(0, 11, (2, 8))
    axes = {"idx": {0: "batch", 1: "seq"}, "logits": {0: "batch", 1: "seq"}}
    kw = dict(input_names=["idx"], output_names=["logits"], dynamic_axes=axes)
    proto, _ = _check(model, (idx,), tmp_path / "gpt.onnx", tol=1e-4, **kw)
    dims = [d.dim_param or d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq"]
    other = ember.randint(0, 11, (3, 5))
    _check(model, (idx,), tmp_path / "gpt2.onnx", tol=1e-4, run_args=(other,), **kw)
    unfolded, _ = _check(
        model,
        (idx,),
        tmp_path / "gpt3.onnx",
        tol=1e-4,
        run_args=(other,),
        do_constant_folding=False,
        **kw,
    )
    assert len(unfolded.graph.node) > len(proto.graph.node)
    # without dynamic axes, sizes fold to constants: no Shape node is left
    static, _ = _check(model, (idx,), tmp_path / "gpt4.onnx", tol=1e-4)
    assert "Shape" not in {n.op_type for n in static.graph.node}
    assert "Shape" in {n.op_type for n in proto.graph.node}


class Reshapes(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, y):
        n = x.size(0)
        h = self.fc(x).reshape(n, 2, 2).permute(0, 2, 1).unsqueeze(1)  # (n, 1, 2, 2)
        h = h.squeeze(1).flatten(1) / 2.0 - 1
        z = ember.matmul(x, y.t()) ** 2  # (n, m)
        a, b = ember.chunk(x, 2, dim=1)
        w = ember.bmm(a.unsqueeze(2), b.unsqueeze(1)).sum(dim=(1, 2), keepdim=False)
        s = x[:, 1:3] * x.shape[1] + x[0, 1:3] - 3 * x[:, -1:]
        return h + z.mean(dim=1, keepdim=True), w.unsqueeze(-1) - s.sum(-1, keepdim=True), s


def test_dynamic_batch_axis_and_shape_ops(tmp_path):
    ember.manual_seed(0)
    model = Reshapes()
    args = (ember.randn(5, 4), ember.randn(3, 4))
    axes = {"x": [0], "out0": [0]}
    proto, sess = _check(
        model,
        args,
        tmp_path / "shapes.onnx",
        output_names=["out0"],
        dynamic_axes=axes,
        run_args=(ember.randn(7, 4), ember.randn(3, 4)),
    )
    assert [i.name for i in sess.get_inputs()] == ["x", "y"]
    assert [o.name for o in sess.get_outputs()] == ["out0", "output_1", "output_2"]
    dim0 = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim0.dim_param == "x_dynamic_axes_1"


def test_charlm_lstm(tmp_path):
    charlm = _load_example("charlm")
    ember.manual_seed(0)
    model = charlm.CharLSTM(20, embed_dim=8, hidden_size=12)
    idx = ember.randint(0, 20, (2, 6))
    _check(model, (idx,), tmp_path / "charlm.onnx", tol=1e-4)
    # with a carried state: (h, c) become inputs, batch and time are dynamic
    state = (ember.randn(1, 2, 12), ember.randn(1, 2, 12))
    axes = {"idx": {0: "b", 1: "t"}, "h0": {1: "b"}, "c0": {1: "b"}}
    names = dict(input_names=["idx", "h0", "c0"], output_names=["logits", "hn", "cn"])
    other = (ember.randint(0, 20, (3, 4)), (ember.randn(1, 3, 12), ember.randn(1, 3, 12)))
    _, sess = _check(
        model, (idx, state), tmp_path / "c2.onnx", tol=1e-4, dynamic_axes=axes, **names
    )
    got = sess.run(None, dict(zip(["idx", "h0", "c0"], [t.numpy() for t in _flat(other)])))
    with ember.no_grad():
        ref = _flat(model(*other))
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r.numpy(), rtol=1e-4, atol=1e-4)


def test_lstm_root_bidirectional_two_layers(tmp_path):
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=True)
    axes = {"input": [0, 1]}
    run = (ember.randn(3, 6, 3),)
    _check(
        lstm,
        (ember.randn(2, 4, 3),),
        tmp_path / "l.onnx",
        tol=1e-4,
        dynamic_axes=axes,
        run_args=run,
    )


class Unsupported(nn.Module):
    def forward(self, x):
        return ember.cumprod(x, dim=0)


def test_unsupported_operator_message(tmp_path):
    from ember.onnx.errors import UnsupportedOperatorError

    with pytest.raises(UnsupportedOperatorError) as info:
        ember.onnx.export(Unsupported(), (ember.randn(3),), str(tmp_path / "u.onnx"))
    # torch's message for an aten operator it cannot export
    assert str(info.value) == (
        "Exporting the operator 'aten::cumprod' to ONNX opset version 20 is not supported"
    )
    assert isinstance(info.value, RuntimeError)
    with pytest.raises(UnsupportedOperatorError, match="ember::nn.GRU"):
        ember.onnx.export(nn.GRU(3, 4), (ember.randn(2, 5, 3),), str(tmp_path / "g.onnx"))


def test_is_in_onnx_export(tmp_path):
    seen = []

    class Probe(nn.Module):
        def forward(self, x):
            seen.append(ember.onnx.is_in_onnx_export())
            return x * 2

    assert not ember.onnx.is_in_onnx_export()
    ember.onnx.export(Probe(), (ember.randn(2),), str(tmp_path / "p.onnx"))
    assert seen and all(seen)
    assert not ember.onnx.is_in_onnx_export()


def test_import_is_lazy():
    import subprocess

    code = "import ember, ember.onnx, sys; print('onnx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


class Fn(nn.Module):
    """Wraps a function of the inputs (no parameters) as a module."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


class Fn2(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x, y):
        return self.fn(x, y)


def _unpack3(parts):
    a, b, c = parts  # fx traces unpacking with a known count, not star-unpacking
    return a, b, c


def _unpack2(parts):
    a, b = parts
    return a.mean(1, keepdim=True), b.mean(1, keepdim=True)


UNARY_CASES = {
    "modules": nn.Sequential(
        nn.ReLU(),
        nn.GELU(),
        nn.GELU("tanh"),
        nn.Tanh(),
        nn.SiLU(),
        nn.LeakyReLU(0.2),
        nn.Sigmoid(),
        nn.Softmax(dim=1),
        nn.LogSoftmax(dim=-1),
        nn.Flatten(),
        nn.Identity(),
        nn.Dropout(),
        nn.ELU(),
        nn.Hardtanh(),
        nn.ReLU6(),
    ),
    "functional": lambda x: (
        F.relu(x)
        + F.gelu(x)
        + F.gelu(x, approximate="tanh")
        + F.silu(x)
        + F.leaky_relu(x, 0.3)
        + F.softmax(x, dim=0)
        + F.log_softmax(x, dim=1)
        + F.dropout(x, 0.3, training=False)
        + ember.tanh(x)
        + ember.sigmoid(x)
        + F.elu(x)
        + F.softplus(x)
    ),
    "methods": lambda x: (
        (x.relu() + x.tanh() + x.sigmoid() + x.softmax(-1) + x.log_softmax(dim=1) + x.exp())
        .abs()
        .sqrt()
        .neg()
        .clamp(-2.0, 0.0)
    ),
    "arith": lambda x: ((x + 1) * 2 - x / 3) ** 2 + 1 / (x.abs() + 1) - 2**x - (3 - x),
    "reduce": lambda x: x.mean(dim=(1, 3)) + x.sum(1).sum(-1, keepdim=False) + x.mean(),
    "stats": lambda x: x.var(dim=1) + x.std(dim=1, keepdim=False) + x.amax(dim=1),
    "views": lambda x: x.permute(0, 2, 3, 1).reshape(x.size(0), -1).view(-1, 2, 15)[:, None],
    "index": lambda x: (x[1], x[..., 0:2, None, 1], x[:, 1:, ::2].flatten(1, 2)[:, :1, -3:]),
    "split": lambda x: (
        ember.cat([*_unpack3(x.split(1, dim=1)), *_unpack2(x.chunk(2, dim=-1))], dim=-1),
        ember.stack([x, x * 2], dim=0).sum(0).sum(-1, keepdim=True),
    ),
    "shape": lambda x: (
        x.transpose(1, 3).unsqueeze(0).squeeze(0).contiguous() * (x.shape[1] + x.size(-1) // 2),
        x.flatten(0, 1).expand(2, 6, 5, 4) + ember.ones(x.size(0), 1, 1, 1),
        ember.zeros_like(x) + x[0, 0].t().sum(),
    ),
    "where": lambda x: (
        ember.where(x > 0, x, x * 0.1)
        + x.masked_fill(x < -0.5, 0.0)
        + (x >= 0).float() * (x != 1).float()
    ),
    "tril": lambda x: ember.tril(x) + ember.triu(x, diagonal=1) * 2,
}


@pytest.mark.parametrize("case", sorted(UNARY_CASES))
@pytest.mark.parametrize("opset", [13, 17, 20])
def test_op_coverage(tmp_path, case, opset):
    ember.manual_seed(1)
    x = ember.randn(2, 3, 5, 4)
    fn = UNARY_CASES[case]
    if case in ("modules", "functional", "methods", "arith"):
        x = x.reshape(6, 20)
    if case == "tril" and opset == 13:
        from ember.onnx.errors import UnsupportedOperatorError

        with pytest.raises(UnsupportedOperatorError, match="added in version 14"):
            ember.onnx.export(Fn(fn), (x,), str(tmp_path / "t.onnx"), opset_version=13)
        return
    _check(Fn(fn), (x,), tmp_path / f"{case}.onnx", tol=1e-4, opset_version=opset)


def test_binary_matmul_sdpa_masks_and_layernorm(tmp_path):
    ember.manual_seed(2)
    q, k = ember.randn(2, 3, 5, 4), ember.randn(2, 3, 6, 4)
    bool_mask = ember.rand(5, 6) > 0.3
    bool_mask[:, 0] = True
    add_mask = ember.randn(5, 6)

    def f(q, k):
        a = F.scaled_dot_product_attention(q, k, k, attn_mask=bool_mask)
        b = F.scaled_dot_product_attention(q, k, k, attn_mask=add_mask, scale=0.3)
        c = ember.bmm(q.flatten(0, 1), k.flatten(0, 1).transpose(1, 2))
        d = F.layer_norm(q, (4,), eps=1e-3)
        return a + b, c @ k.flatten(0, 1), d

    for opset in (13, 17):
        _check(Fn2(f), (q, k), tmp_path / f"sdpa{opset}.onnx", tol=1e-4, opset_version=opset)


def test_export_params_false_and_keep_initializers(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2))
    x = ember.randn(1, 3)
    ember.onnx.export(model, (x,), str(tmp_path / "a.onnx"), export_params=False)
    proto = onnx.load(str(tmp_path / "a.onnx"))
    assert not proto.graph.initializer
    assert [i.name for i in proto.graph.input] == ["input", "0.weight", "0.bias"]
    ember.onnx.export(model, (x,), str(tmp_path / "b.onnx"), keep_initializers_as_inputs=True)
    proto = onnx.load(str(tmp_path / "b.onnx"))
    assert {t.name for t in proto.graph.initializer} == {"0.weight", "0.bias"}
    assert len(proto.graph.input) == 3


def test_single_module_root_and_kwargs(tmp_path):
    ember.manual_seed(3)
    conv = nn.Conv2d(2, 4, 3, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    proto, _ = _check(conv, (ember.randn(1, 2, 7, 9),), tmp_path / "conv.onnx")
    assert {t.name for t in proto.graph.initializer} == {"weight", "bias"}

    class KW(nn.Module):
        def forward(self, x, scale=2.0, y=None):
            return x * scale if y is None else x * scale + y

    m = KW()
    x, y = ember.randn(3), ember.randn(3)
    ember.onnx.export(m, (x,), str(tmp_path / "kw.onnx"), kwargs={"y": y})
    sess = ort.InferenceSession(str(tmp_path / "kw.onnx"), providers=["CPUExecutionProvider"])
    got = sess.run(None, {"x": x.numpy(), "y": y.numpy()})[0]
    np.testing.assert_allclose(got, (x * 2 + y).numpy(), rtol=1e-6)


@pytest.mark.parametrize(
    "args",
    [("aten::cumprod", 20, None), ("aten::tril", 13, 14), ("mylib::op", 17, None)],
)
def test_error_messages_match_torch(args):
    from ember.onnx.errors import UnsupportedOperatorError

    torch_errors = pytest.importorskip("torch.onnx.errors")
    assert str(UnsupportedOperatorError(*args)) == str(torch_errors.UnsupportedOperatorError(*args))


class More(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1)
        self.acts = nn.Sequential(nn.Hardswish(), nn.Mish(), nn.Hardsigmoid())

    def forward(self, x):
        y = self.acts(self.up(x))  # (2, 2, 8, 8)
        m = y.max(dim=1)
        v, i = ember.min(y, 2, keepdim=True)
        e = ember.einsum("bchw,bdhw->bcd", y, y)
        p = F.pad(x, (1, 2, 0, 1), value=0.5)
        return (
            m.values + m.indices.float(),
            v * i,
            y.argmax(dim=-1),
            ember.cumsum(y, dim=3).sign().round(),
            e,
            p.repeat(1, 2, 1, 1).square().clamp_min(0.1),
            ember.max(x),
        )


def test_more_ops(tmp_path):
    ember.manual_seed(4)
    _check(More(), (ember.randn(2, 3, 4, 4),), tmp_path / "more.onnx", tol=1e-4)


class InPlace(nn.Module):
    def forward(self, x):
        y = x * 1
        y.add_(1)
        y.mul_(2)
        F.relu(y, inplace=True)
        return y, x


def test_inplace_ops_rebind(tmp_path):
    _check(InPlace(), (ember.randn(4),), tmp_path / "inplace.onnx")


class NormsAndResize(nn.Module):
    def __init__(self):
        super().__init__()
        self.gn = nn.GroupNorm(2, 4)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.up = nn.Upsample(scale_factor=2, mode="nearest")

    def forward(self, x):
        a = self.up(self.gn(x))
        b = F.interpolate(self.inorm(x), size=(5, 7), mode="bilinear", align_corners=False)
        c = F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=True)
        return a, b, c, F.group_norm(x, 4)


@pytest.mark.parametrize("opset", [13, 20])
def test_norms_and_resize(tmp_path, opset):
    ember.manual_seed(5)
    model = NormsAndResize()
    with ember.no_grad():
        model.gn.weight.copy_(ember.randn(4))
        model.inorm.bias.copy_(ember.randn(4))
    _check(model, (ember.randn(2, 4, 4, 6),), tmp_path / "n.onnx", tol=1e-4, opset_version=opset)


class MHA(nn.Module):
    def __init__(self, batch_first):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=batch_first)
        self.batch_first = batch_first

    def forward(self, x, pad):
        L = 5
        causal = ember.triu(ember.ones(L, L, dtype=ember.bool), diagonal=1)
        a, w = self.attn(x, x, x, attn_mask=causal)
        b, _ = self.attn(x, x, x, key_padding_mask=pad, need_weights=False)
        c, w2 = self.attn(x, x, x, attn_mask=causal.float() * -1e4, average_attn_weights=False)
        return a + b + c, w, w2


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention(tmp_path, batch_first):
    ember.manual_seed(6)
    x = ember.randn(3, 5, 8) if batch_first else ember.randn(5, 3, 8)
    pad = ember.zeros(3, 5, dtype=ember.bool)
    pad[0, 3:] = True
    _check(MHA(batch_first), (x, pad), tmp_path / "mha.onnx", tol=1e-4)


class _ScaledBySize(nn.Module):
    """Scales by 1/sqrt of one of its input's sizes, computed with ``math`` (ember.fx records
    no call into ``math``: the exporter computes the value from the example input)."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x * (1.0 / math.sqrt(x.size(self.dim))) + math.floor(x.size(self.dim) / 2)


def test_math_functions_of_sizes(tmp_path):
    x = ember.randn(3, 4)
    axes = {"x": {0: "batch"}, "y": {0: "batch"}}
    kw = dict(input_names=["x"], output_names=["y"], dynamic_axes=axes)
    # a static size: a constant of the graph, right for any batch
    _check(_ScaledBySize(1), (x,), tmp_path / "static.onnx", run_args=(ember.randn(5, 4),), **kw)
    # a size along a dynamic axis cannot be a constant: refused, not exported wrong
    with pytest.raises(ember.onnx.OnnxExporterError, match="depends on a dynamic axis"):
        ember.onnx.export(_ScaledBySize(0), (x,), str(tmp_path / "dyn.onnx"), **kw)
    # without dynamic axes it is a constant
    _check(_ScaledBySize(0), (x,), tmp_path / "fixed.onnx")


# -- the converters are keyed by ember's objects ---------------------------------------------


def test_converters_are_keyed_by_the_functions_and_classes():
    from ember.onnx import _exporter as ex

    assert not any(isinstance(k, str) for k in ex._FUNCS)
    assert all(isinstance(k, type) and issubclass(k, nn.Module) for k in ex._MODULES)

    def conv(fn):
        return ex._FUNCS.get(ex._impl(fn))

    # a function, its method form and its nn.functional form; aliases share the converter
    assert conv(ember.relu) is conv(ember.Tensor.relu) is conv(F.relu) is not None
    assert conv(ember.clip) is conv(ember.clamp) is conv(ember.Tensor.clip)
    assert conv(ember.special.expit) is conv(ember.sigmoid)
    assert conv(ember.swapdims) is conv(ember.transpose) is conv(ember.swapaxes)
    assert conv(ember.cumprod) is None
    assert ex._module_converter(nn.ReLU) is not None
    assert ex._module_converter(nn.Conv2d) is ex._module_converter(nn.Conv1d)


class _TaggedLinear(nn.Linear):
    """A user's Linear that only adds an attribute: it runs Linear's forward."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.tag = "mine"


class _DoubledLinear(nn.Linear):
    def forward(self, x):
        return super().forward(x) * 2


class Linear(nn.Module):
    """A user's module that has ember's class name and nothing else of it."""

    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(ember.full((3,), 2.0))

    def forward(self, x):
        return x * self.scale


class _MyLSTM(nn.LSTM):
    pass


def test_subclasses_of_ember_modules(tmp_path):
    """A subclass that runs its base's forward converts as its base (found through the
    MRO); one with its own forward is traced through; a class merely named like one of
    ember's is the user's."""
    from ember.onnx import _exporter as ex

    assert ex._module_converter(_TaggedLinear) is ex._module_converter(nn.Linear)
    assert ex._module_converter(_DoubledLinear) is None
    assert ex._module_converter(Linear) is None
    ember.manual_seed(7)
    x = ember.randn(2, 4)
    tagged = nn.Sequential(_TaggedLinear(4, 3), nn.ReLU())
    proto, _ = _check(tagged, (x,), tmp_path / "tagged.onnx")
    assert [n.op_type for n in proto.graph.node] == ["Gemm", "Relu"]
    assert {t.name for t in proto.graph.initializer} == {"0.weight", "0.bias"}
    _check(nn.Sequential(_DoubledLinear(4, 3)), (x,), tmp_path / "doubled.onnx")
    _check(nn.Sequential(Linear()), (ember.randn(2, 3),), tmp_path / "named.onnx")
    _check(_MyLSTM(3, 5), (ember.randn(4, 2, 3),), tmp_path / "lstm.onnx", tol=1e-4)
    ups = nn.Sequential(nn.UpsamplingBilinear2d(scale_factor=2), nn.AvgPool1d(2))
    _check(ups[:1], (ember.randn(1, 2, 3, 3),), tmp_path / "ups.onnx", tol=1e-5)
    _check(ups[1:], (ember.randn(2, 3, 6),), tmp_path / "avg1d.onnx")


class _InPlaceFunctional(nn.Module):
    def forward(self, x):
        y = x * 1
        F.relu_(y)
        F.leaky_relu_(y, 0.5)
        return y + 1, ember.numel(x) * ember.special.expit(x)


def test_inplace_functional_forms_rebind(tmp_path):
    """F.relu_(y) changes y: later reads of y see the result (as for y.relu_())."""
    _check(_InPlaceFunctional(), (ember.randn(3, 4),), tmp_path / "inplace_f.onnx")
