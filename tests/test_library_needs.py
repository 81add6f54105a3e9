"""Small torch names that peft, transformers and diffusers use (issue 27), against torch:
``torch.get_device_module`` and ``Tensor.view`` with ``dtype=``/``size=`` keywords
(safetensors' tensors are reinterpreted with ``view(dtype=...)``)."""

from __future__ import annotations

import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:0", "mps", None])
def test_get_device_module_matches_torch(device):
    got = ember.get_device_module(device)
    want = torch.get_device_module(device)
    assert got.__name__.replace("ember", "torch") == want.__name__
    if device is not None:
        assert ember.get_device_module(ember.device(device)) is got


@pytest.mark.parametrize("device", ["meta", 3, "bogus"])
def test_get_device_module_errors_match_torch(device):
    with pytest.raises(RuntimeError) as t_err:
        torch.get_device_module(device)
    with pytest.raises(RuntimeError) as e_err:
        ember.get_device_module(device)
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.view(dtype=lib.int32),
        lambda lib, x: x.view(size=(2, 3)),
        lambda lib, x: x.view(size=[3, 2]),
    ],
)
def test_view_keywords_match_torch(call):
    got = call(ember, ember.arange(6.0))
    want = call(torch, torch.arange(6.0))
    assert got.shape == want.shape and str(got.dtype) == str(want.dtype)
    assert got.tolist() == want.tolist()


@pytest.mark.parametrize(
    "call",
    [
        lambda lib, x: x.view(2, dtype=lib.int32),
        lambda lib, x: x.view(foo=1),
        lambda lib, x: x.view(size=(2, 3), dtype=lib.int32),
        lambda lib, x: x.view(size=6),
    ],
)
def test_view_keyword_errors_match_torch(call):
    with pytest.raises(TypeError) as t_err:
        call(torch, torch.arange(6.0))
    with pytest.raises(TypeError) as e_err:
        call(ember, ember.arange(6.0))
    assert str(e_err.value) == str(t_err.value)


def test_view_keyword_keeps_the_graph():
    x = ember.arange(6.0, requires_grad=True)
    y = x.view(size=(2, 3))
    assert y.grad_fn.name() == "ViewBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [1.0] * 6
