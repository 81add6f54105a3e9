"""What torchvision and timm need from torch at import and in their Python code (issue 27),
compared with torch: dispatch keys, the TorchScript and ONNX registration helpers they call
at import, nn.modules.utils, BatchNorm fusion, the quantization stubs, channels-last
contiguity, and ember's own torchvision::nms (torchvision's compiled operators cannot load
into ember)."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        return ("ok", repr(fn()))
    except Exception as e:  # noqa: BLE001 (the error is what is compared)
        return type(e).__name__, str(e)


def test_dispatch_keys_and_key_sets():
    for name in ("AutocastCPU", "AutocastCUDA", "AutocastXPU", "CPU", "Autograd", "Meta"):
        assert int(getattr(ember._C.DispatchKey, name)) == int(getattr(torch._C.DispatchKey, name))
    assert set(ember._C.DispatchKey.__members__) == set(torch._C.DispatchKey.__members__)

    def keyset(m):
        K = m._C.DispatchKey
        keys = m._C.DispatchKeySet(K.AutocastCPU) | m._C.DispatchKeySet(K.AutocastCUDA)
        return repr(keys), keys.has(K.AutocastCPU), keys.has(K.CPU)

    assert keyset(ember) == keyset(torch)
    with ember._C._ExcludeDispatchKeyGuard(ember._C.DispatchKeySet(ember._C.DispatchKey.CPU)):
        assert ember.ones(1).item() == 1.0
    assert ember._C._get_tracing_state() is torch._C._get_tracing_state() is None


def test_library_helpers_torchvision_calls_at_import():
    import torch._custom_ops
    import torch.jit.annotations as torch_annotations

    import ember._custom_ops
    import ember.jit.annotations as ember_annotations

    assert ember._custom_ops.get_ctx() is torch._custom_ops.get_ctx() is None
    assert ember_annotations.BroadcastingList2[int] is torch_annotations.BroadcastingList2[int]
    assert ember.jit._script_if_tracing(len)("abc") == torch.jit._script_if_tracing(len)("abc")
    from torch._dynamo.utils import is_compile_supported as torch_supported

    from ember._dynamo.utils import is_compile_supported

    for dev in ("cpu", "cuda", "meta"):
        assert is_compile_supported(dev) == torch_supported(dev), dev
    assert ember.hub.urlparse is torch.hub.urlparse
    import torch.utils.model_zoo

    import ember.utils.model_zoo

    assert ember.utils.model_zoo.tqdm is torch.utils.model_zoo.tqdm  # tqdm's, installed
    for m in (ember, torch):
        m._assert(True, "never")
    assert _outcome(lambda: ember._assert(False, "boxes")) == _outcome(
        lambda: torch._assert(False, "boxes")
    )


@pytest.mark.parametrize("name", ["bad", "a::b::c", "::relu", "mylib::op", "1x::op"])
def test_onnx_custom_symbolic_registration_checks_names_as_torch(name):
    def run(m):
        m.onnx.register_custom_op_symbolic(name, lambda g, x: x, 17)
        m.onnx.unregister_custom_op_symbolic(name, 17)

    got, want = _outcome(lambda: run(ember)), _outcome(lambda: run(torch))
    assert got == want
    from ember.onnx.symbolic_helper import parse_args

    assert parse_args("v", "i")(lambda g, x, n: x)._arg_descriptors == ("v", "i")


def test_nn_modules_utils_match_torchs():
    import torch.nn.modules.utils as t

    import ember.nn.modules.utils as e

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (4, 5), [1, 2, 3]):
            assert getattr(e, name)(arg) == getattr(t, name)(arg)
    assert e._reverse_repeat_tuple((1, 2, 3), 2) == t._reverse_repeat_tuple((1, 2, 3), 2)
    assert e._list_with_default([None, 3], [1, 2, 5, 6]) == t._list_with_default(
        [None, 3], [1, 2, 5, 6]
    )
    assert _outcome(lambda: e._list_with_default([1, 2], [3, 4])) == _outcome(
        lambda: t._list_with_default([1, 2], [3, 4])
    )

    def stripped(m):
        sd = OrderedDict([("module.w", 1), ("b", 2)])
        sd._metadata = OrderedDict([("", {"v": 0}), ("module", {"v": 1}), ("module.fc", {})])
        m.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd.items()), list(sd._metadata.items())

    assert stripped(e) == stripped(t)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose", "linear"])
def test_batchnorm_fusion_matches_torch(kind):
    def build(m):
        rng = np.random.default_rng(0)
        if kind == "conv":
            layer, bn, x = m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4), (2, 3, 6, 6)
        elif kind == "conv_transpose":
            layer, bn, x = m.nn.ConvTranspose2d(3, 4, 3), m.nn.BatchNorm2d(4), (2, 3, 6, 6)
        else:
            layer, bn, x = m.nn.Linear(5, 4), m.nn.BatchNorm1d(4), (3, 5)
        with m.no_grad():
            for p in [*layer.parameters(), *bn.parameters()]:
                p.copy_(m.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype))
            bn.running_mean.copy_(m.tensor(rng.standard_normal(4), dtype=m.float32))
            bn.running_var.copy_(m.tensor(rng.random(4) + 0.5, dtype=m.float32))
        return layer.eval(), bn.eval(), m.tensor(rng.standard_normal(x), dtype=m.float32)

    def run(m):
        from importlib import import_module

        fusion = import_module(f"{m.__name__}.nn.utils.fusion")
        layer, bn, x = build(m)
        if kind == "linear":
            fused = fusion.fuse_linear_bn_eval(layer, bn)
        else:
            fused = fusion.fuse_conv_bn_eval(layer, bn, transpose=kind == "conv_transpose")
        return fused(x).detach().numpy(), bn(layer(x)).detach().numpy()

    got, got_ref = run(ember)
    want, _ = run(torch)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, got_ref, rtol=1e-5, atol=1e-5)
    import torch.nn.utils.fusion as tf

    import ember.nn.utils.fusion as ef

    def fuse_in_train_mode(m, fusion):
        return fusion.fuse_linear_bn_eval(m.nn.Linear(3, 2), m.nn.BatchNorm1d(2).eval())

    for m, fusion in ((ember, ef), (torch, tf)):
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            fuse_in_train_mode(m, fusion)


def test_quantization_stubs_are_the_identity_as_torchs():
    from ember.ao.quantization import DeQuantStub, QuantStub

    x = ember.tensor([1.5, -2.0])
    assert DeQuantStub()(QuantStub()(x)) is x
    assert repr(QuantStub()) == repr(torch.ao.quantization.QuantStub())
    with pytest.raises(AttributeError, match="no quantized tensors"):
        ember.ao.quantization.prepare  # noqa: B018


def test_channels_last_contiguity_matches_torch():
    cases = [
        lambda m: m.ones(2, 3, 4, 5),
        lambda m: m.ones(2, 1, 4, 5),
        lambda m: m.ones(2, 3, 1, 1),
        lambda m: m.ones(3),
        lambda m: m.ones(2, 4, 5, 3).permute(0, 3, 1, 2),
        lambda m: m.ones(2, 4, 5, 6, 3).permute(0, 4, 1, 2, 3),
    ]
    for make in cases:
        for fmt in ("contiguous_format", "channels_last", "channels_last_3d"):
            got = make(ember).is_contiguous(memory_format=getattr(ember, fmt))
            assert got == make(torch).is_contiguous(memory_format=getattr(torch, fmt)), fmt


def _nms_reference(boxes, scores, threshold):
    """Greedy suppression by the definition, one pair at a time."""
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    keep = []
    for i in order:
        ok = True
        for j in keep:
            xx1, yy1 = max(boxes[i][0], boxes[j][0]), max(boxes[i][1], boxes[j][1])
            xx2, yy2 = min(boxes[i][2], boxes[j][2]), min(boxes[i][3], boxes[j][3])
            inter = max(0.0, xx2 - xx1) * max(0.0, yy2 - yy1)
            area = lambda b: (b[2] - b[0]) * (b[3] - b[1])  # noqa: E731
            if inter / (area(boxes[i]) + area(boxes[j]) - inter) > threshold:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


@pytest.mark.parametrize("seed", range(5))
def test_ember_nms_keeps_what_greedy_suppression_keeps(seed):
    rng = np.random.default_rng(seed)
    corner = rng.random((30, 2)) * 10
    boxes = np.concatenate([corner, corner + rng.random((30, 2)) * 5 + 0.1], axis=1)
    scores = rng.permutation(30) / 30.0  # distinct: the order is defined
    got = ember.ops.torchvision.nms(ember.tensor(boxes), ember.tensor(scores), 0.3)
    assert got.dtype == ember.int64
    assert got.tolist() == _nms_reference(boxes.tolist(), scores.tolist(), 0.3)
    assert ember.ops.torchvision.nms(ember.zeros(0, 4), ember.zeros(0), 0.5).tolist() == []
    with pytest.raises(RuntimeError, match="boxes should have 4 elements in dimension 1"):
        ember.ops.torchvision.nms(ember.zeros(2, 3), ember.zeros(2), 0.5)
    with pytest.raises(NotImplementedError, match="quantized"):
        ember.ops.torchvision.qnms(ember.zeros(1, 4), ember.zeros(1), 0.5)
