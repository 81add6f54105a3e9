"""ember.nn.utils against torch.nn.utils (float64): parameter/vector conversion, clipping
options, the hook-based weight_norm / spectral_norm, parametrize and parametrizations, and
stateless.functional_call. Modules start from torch's state (state_dict copies), so values
and gradients compare exactly; random initial vectors come from ember's generator."""

import math
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import parametrizations, parametrize
from ember.nn.utils.stateless import functional_call

torch = pytest.importorskip("torch")
TU = torch.nn.utils

RNG = np.random.default_rng(5)


def _e(t):
    return ember.tensor(t.detach().numpy())


def _linear_pair(n_in=4, n_out=3):
    tm = torch.nn.Linear(n_in, n_out).double()
    em = nn.Linear(n_in, n_out).double()
    em.load_state_dict({k: _e(v) for k, v in tm.state_dict().items()})
    return em, tm


def _conv_pair():
    tm = torch.nn.Conv2d(2, 3, 3).double()
    em = nn.Conv2d(2, 3, 3).double()
    em.load_state_dict({k: _e(v) for k, v in tm.state_dict().items()})
    return em, tm


def _load_from(em, tm):
    em.load_state_dict({k: _e(v) for k, v in tm.state_dict().items()})


def _run(em, tm, shape):
    x = RNG.standard_normal(shape)
    ey, ty = em(ember.tensor(x)), tm(torch.tensor(x))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = RNG.standard_normal(tuple(ty.shape))
    ey.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    eg = {n: p.grad for n, p in em.named_parameters()}
    tg = {n: p.grad for n, p in tm.named_parameters()}
    assert sorted(eg) == sorted(tg)
    for n in tg:
        np.testing.assert_allclose(eg[n].numpy(), tg[n].numpy(), rtol=1e-9, atol=1e-12, err_msg=n)


# -- convert_parameters -------------------------------------------------------------------


def test_parameters_to_vector_and_back_match_torch():
    em, tm = _linear_pair()
    ev = nn.utils.parameters_to_vector(em.parameters())
    tv = TU.parameters_to_vector(tm.parameters())
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    w = RNG.standard_normal(ev.shape[0])
    (ev * ember.tensor(w)).sum().backward()
    (tv * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(em.weight.grad.numpy(), tm.weight.grad.numpy())
    new = RNG.standard_normal(ev.shape[0])
    nn.utils.vector_to_parameters(ember.tensor(new), em.parameters())
    TU.vector_to_parameters(torch.tensor(new), tm.parameters())
    for (n, ep), (_, tp) in zip(em.named_parameters(), tm.named_parameters()):
        assert isinstance(ep, nn.Parameter)
        np.testing.assert_array_equal(ep.detach().numpy(), tp.detach().numpy(), err_msg=n)
    with pytest.raises(TypeError) as te:
        TU.vector_to_parameters([1.0], tm.parameters())
    with pytest.raises(TypeError) as ee:
        nn.utils.vector_to_parameters([1.0], em.parameters())
    assert str(ee.value) == str(te.value)


# -- clipping -------------------------------------------------------------------------------


def _with_grads(lib, grads):
    ps = []
    for g in grads:
        p = lib.zeros(g.shape, dtype=lib.float64, requires_grad=True)
        p.grad = lib.tensor(g)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [1.0, 2.0, math.inf, 0.5, "inf"])
@pytest.mark.parametrize("foreach", [None, False, True])
def test_clip_grad_norm_options_match_torch(norm_type, foreach):
    grads = [RNG.standard_normal((3, 4)), RNG.standard_normal(5)]
    ep, tp = _with_grads(ember, grads), _with_grads(torch, grads)
    et = nn.utils.clip_grad_norm_(ep, 0.7, norm_type, foreach=foreach)
    tt = TU.clip_grad_norm_(tp, 0.7, norm_type, foreach=foreach)
    np.testing.assert_allclose(et.numpy(), tt.numpy(), rtol=1e-12)
    for e, t in zip(ep, tp):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_nonfinite_error_and_deprecated_alias_match_torch():
    grads = [np.array([1.0, np.inf])]
    with pytest.raises(RuntimeError) as te:
        TU.clip_grad_norm_(_with_grads(torch, grads), 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as ee:
        nn.utils.clip_grad_norm_(_with_grads(ember, grads), 1.0, error_if_nonfinite=True)
    assert str(ee.value) == str(te.value)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        total = nn.utils.clip_grad_norm(_with_grads(ember, [np.array([3.0, 4.0])]), 1.0)
    assert total.item() == 5.0


def test_total_norm_and_clip_with_norm_match_torch():
    grads = [RNG.standard_normal(4), RNG.standard_normal((2, 2))]
    ep, tp = _with_grads(ember, grads), _with_grads(torch, grads)
    en = nn.utils.get_total_norm([p.grad for p in ep], 3.0)
    tn = TU.get_total_norm([p.grad for p in tp], 3.0)
    np.testing.assert_allclose(en.numpy(), tn.numpy(), rtol=1e-12)
    nn.utils.clip_grads_with_norm_(ep, 0.5, en)
    TU.clip_grads_with_norm_(tp, 0.5, tn)
    for e, t in zip(ep, tp):
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-12)


# -- hook-based weight_norm / spectral_norm -----------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, None])
@pytest.mark.parametrize("layer", ["linear", "conv"])
def test_weight_norm_hook_matches_torch(dim, layer):
    em, tm = _linear_pair() if layer == "linear" else _conv_pair()
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        nn.utils.weight_norm(em, dim=dim)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TU.weight_norm(tm, dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    for k in ("weight_g", "weight_v"):
        np.testing.assert_allclose(
            em.state_dict()[k].numpy(), tm.state_dict()[k].numpy(), rtol=1e-12
        )
    _run(em, tm, (2, 4) if layer == "linear" else (2, 2, 5, 5))
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nn.utils.weight_norm(em, dim=dim)
    nn.utils.remove_weight_norm(em)
    TU.remove_weight_norm(tm)
    assert isinstance(em.weight, nn.Parameter) and list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(em)


@pytest.mark.parametrize("n_power_iterations", [1, 3])
def test_spectral_norm_hook_matches_torch(n_power_iterations):
    em, tm = _conv_pair()
    nn.utils.spectral_norm(em, n_power_iterations=n_power_iterations)
    TU.spectral_norm(tm, n_power_iterations=n_power_iterations)
    assert list(em.state_dict()) == list(tm.state_dict())
    u = em.weight_u.numpy()
    assert abs(np.linalg.norm(u) - 1) < 1e-6
    _load_from(em, tm)  # the same random u, v as torch
    _run(em, tm, (2, 2, 5, 5))  # training: power iteration updates u and v
    for k in ("weight_u", "weight_v"):
        np.testing.assert_allclose(getattr(em, k).numpy(), getattr(tm, k).numpy(), rtol=1e-10)
    em.eval()
    tm.eval()
    _run(em, tm, (1, 2, 5, 5))
    assert em.state_dict()._metadata[""]["spectral_norm"] == {"weight.version": 1}
    nn.utils.remove_spectral_norm(em)
    TU.remove_spectral_norm(tm)
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-10)
    with pytest.raises(ValueError) as te:
        TU.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(ValueError) as ee:
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    assert str(ee.value) == str(te.value)


# -- parametrize ------------------------------------------------------------------------------


class _Symmetric:
    @staticmethod
    def make(lib):
        class Symmetric(lib.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).mT

            def right_inverse(self, A):
                return A.triu()

        return Symmetric()


class _Scale:
    @staticmethod
    def make(lib, s):
        class Scale(lib.nn.Module):
            def forward(self, X):
                return X * s

        return Scale()


def test_register_parametrization_matches_torch():
    em, tm = _linear_pair(3, 3)
    parametrize.register_parametrization(em, "weight", _Symmetric.make(ember))
    TU.parametrize.register_parametrization(tm, "weight", _Symmetric.make(torch))
    assert type(em).__name__ == type(tm).__name__ == "ParametrizedLinear"
    assert parametrize.type_before_parametrizations(em) is nn.Linear
    assert list(em.state_dict()) == list(tm.state_dict())
    assert parametrize.is_parametrized(em) and parametrize.is_parametrized(em, "weight")
    assert not parametrize.is_parametrized(em, "bias")
    np.testing.assert_array_equal(em.weight.detach().numpy(), tm.weight.detach().numpy())
    _run(em, tm, (2, 3))
    # Chaining, then assignment through right_inverse.
    parametrize.register_parametrization(em, "weight", _Scale.make(ember, 2.0))
    TU.parametrize.register_parametrization(tm, "weight", _Scale.make(torch, 2.0))
    np.testing.assert_array_equal(em.weight.detach().numpy(), tm.weight.detach().numpy())
    with pytest.raises(RuntimeError) as te:
        tm.weight = torch.eye(3, dtype=torch.float64)
    with pytest.raises(RuntimeError) as ee:
        em.weight = ember.eye(3, dtype=ember.float64)
    assert str(ee.value) == str(te.value)


def test_parametrization_assignment_cache_and_removal():
    em, _ = _linear_pair(3, 3)
    parametrize.register_parametrization(em, "weight", _Symmetric.make(ember))
    a = RNG.standard_normal((3, 3))
    a = ember.tensor(a + a.T)
    em.weight = a
    np.testing.assert_allclose(em.weight.detach().numpy(), a.numpy())
    assert em.weight is not em.weight
    with parametrize.cached():
        assert em.weight is em.weight
    original = em.parametrizations.weight.original
    parametrize.remove_parametrizations(em, "weight")
    assert type(em) is nn.Linear and em.weight is original
    np.testing.assert_allclose(em.weight.detach().numpy(), a.numpy())
    parametrize.register_parametrization(em, "weight", _Scale.make(ember, 3.0))
    parametrize.remove_parametrizations(em, "weight", leave_parametrized=False)
    np.testing.assert_allclose(em.weight.detach().numpy(), a.numpy())
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(em, "weight")


def test_parametrize_errors_match_torch():
    class Flatten(ember.nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    class TFlatten(torch.nn.Module):
        def forward(self, X):
            return X.reshape(-1)

    with pytest.raises(ValueError) as te:
        TU.parametrize.register_parametrization(torch.nn.Linear(2, 3), "weight", TFlatten())
    with pytest.raises(ValueError) as ee:
        parametrize.register_parametrization(nn.Linear(2, 3), "weight", Flatten())
    assert str(ee.value) == str(te.value)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a"):
        parametrize.register_parametrization(nn.Linear(2, 3), "nope", Flatten())


# -- parametrizations ---------------------------------------------------------------------------


@pytest.mark.parametrize("dim", [0, 1, None])
def test_parametrized_weight_norm_matches_torch(dim):
    em, tm = _conv_pair()
    parametrizations.weight_norm(em, dim=dim)
    TU.parametrizations.weight_norm(tm, dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)
    _run(em, tm, (2, 2, 5, 5))


def test_parametrized_weight_norm_loads_old_state_dicts():
    em, tm = _linear_pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        TU.weight_norm(tm)
    parametrizations.weight_norm(em)
    em.load_state_dict({k: _e(v) for k, v in tm.state_dict().items()})
    np.testing.assert_allclose(em.weight.detach().numpy(), tm.weight.detach().numpy(), rtol=1e-12)


@pytest.mark.parametrize("dim", [0, 1])
def test_parametrized_spectral_norm_matches_torch(dim):
    em, tm = _conv_pair()
    parametrizations.spectral_norm(em, dim=dim)
    TU.parametrizations.spectral_norm(tm, dim=dim)
    assert list(em.state_dict()) == list(tm.state_dict())
    w = em.parametrizations.weight.original.detach().numpy()
    mat = np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)
    sigma = np.linalg.svd(mat, compute_uv=False)[0]
    em.eval()
    # weight / (u . W v) with the buffers, u . W v a lower estimate of the top singular
    # value (15 power-iteration steps at registration).
    sn = em.parametrizations.weight[0]
    est = sn._u.numpy() @ mat @ sn._v.numpy()
    np.testing.assert_allclose(em.weight.detach().numpy(), w / est, rtol=1e-12)
    assert 0.8 * sigma < est <= sigma * (1 + 1e-9)
    em.train()
    _load_from(em, tm)
    _run(em, tm, (2, 2, 5, 5))
    for k in ("_u", "_v"):
        np.testing.assert_allclose(
            getattr(em.parametrizations.weight[0], k).numpy(),
            getattr(tm.parametrizations.weight[0], k).numpy(),
            rtol=1e-10,
        )


def test_parametrized_spectral_norm_of_a_vector_and_errors():
    m = nn.Linear(3, 1)
    parametrizations.spectral_norm(m, "bias")
    np.testing.assert_allclose(
        m.bias.detach().numpy(), np.sign(m.parametrizations.bias.original.detach().numpy())
    )
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        parametrizations.spectral_norm(nn.Linear(2, 2), "nope")
    with pytest.raises(IndexError) as te:
        TU.parametrizations.spectral_norm(torch.nn.Linear(2, 2), dim=2)
    with pytest.raises(IndexError) as ee:
        parametrizations.spectral_norm(nn.Linear(2, 2), dim=2)
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_orthogonal_cayley_matches_torch(shape):
    em, tm = _linear_pair(shape[1], shape[0])
    parametrizations.orthogonal(em, orthogonal_map="cayley")
    TU.parametrizations.orthogonal(tm, orthogonal_map="cayley")
    w = em.weight.detach().numpy()
    small = min(shape)
    gram = w @ w.T if shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)
    if shape[0] == shape[1]:  # square: no random completion, the same start as torch
        np.testing.assert_allclose(w, tm.weight.detach().numpy(), atol=1e-10)
    _load_from(em, tm)
    x = RNG.standard_normal(tuple(em.parametrizations.weight.original.shape)) * 0.3
    em.parametrizations.weight.original.data = ember.tensor(x)
    with torch.no_grad():
        tm.parametrizations.weight.original.copy_(torch.tensor(x))
    _run(em, tm, (2, shape[1]))
    w = em.weight.detach().numpy()
    gram = w @ w.T if shape[0] == small else w.T @ w
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-10)


def test_orthogonal_maps_and_errors():
    m = parametrizations.orthogonal(nn.Linear(3, 3))  # default: cayley in ember
    w = m.weight.detach().numpy()
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-5)
    with pytest.raises(NotImplementedError, match="no 'matrix_exp' map"):
        parametrizations.orthogonal(nn.Linear(3, 3), orthogonal_map="matrix_exp")
    for fn, exc in [
        (lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), "bias"), ValueError),
        (
            lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(3, 3), orthogonal_map="x"),
            ValueError,
        ),
    ]:
        with pytest.raises(exc) as te:
            fn(torch)
        with pytest.raises(exc) as ee:
            fn(ember)
        assert str(ee.value) == str(te.value)


# -- stateless.functional_call ----------------------------------------------------------------


def test_functional_call_matches_torch_and_leaves_the_module():
    em, tm = _linear_pair()
    w = RNG.standard_normal((3, 4))
    x = RNG.standard_normal((2, 4))
    ew = ember.tensor(w, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ey = functional_call(em, {"weight": ew}, (ember.tensor(x),))
    ty = torch.func.functional_call(tm, {"weight": tw}, (torch.tensor(x),))
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
    ey.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    assert em.weight.grad is None and isinstance(em.weight, nn.Parameter)
    np.testing.assert_array_equal(em.weight.detach().numpy(), tm.weight.detach().numpy())
    # A tuple of dicts, kwargs, and a buffer.
    bn = nn.BatchNorm1d(4).double().eval()
    out = functional_call(
        bn,
        (
            {"running_mean": ember.ones(4, dtype=ember.float64)},
            {"weight": ember.zeros(4, dtype=ember.float64)},
        ),
        kwargs={"input": ember.ones(2, 4, dtype=ember.float64)},
    )
    np.testing.assert_allclose(out.detach().numpy(), bn.bias.detach().numpy()[None].repeat(2, 0))
    assert (bn.running_mean.numpy() == 0).all()


def test_functional_call_tied_weights_and_strict():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2, bias=False)
            self.b = nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    m = Tied()
    x = ember.ones(1, 2)
    out = functional_call(m, {"a.weight": ember.eye(2) * 2}, (x,))
    np.testing.assert_allclose(out.detach().numpy(), [[4.0, 4.0]])
    out = functional_call(m, {"a.weight": ember.eye(2) * 2}, (x,), tie_weights=False)
    assert not np.allclose(out.detach().numpy(), [[4.0, 4.0]])
    with pytest.raises(RuntimeError, match="Missing key"):
        functional_call(nn.Linear(2, 2), {"weight": ember.eye(2)}, (x,), strict=True)


def test_module_paths_match_torch():
    import importlib

    for name in [
        "parametrize",
        "parametrizations",
        "stateless",
        "convert_parameters",
        "clip_grad",
        "init",
    ]:
        importlib.import_module(f"ember.nn.utils.{name}")
    torch_names = {n for n in TU.__all__ if not n.startswith(("convert_conv", "fuse_", "rnn"))}
    assert sorted(torch_names - set(dir(nn.utils))) == []
    assert sorted(parametrize.__all__) == sorted(TU.parametrize.__all__)
    assert sorted(parametrizations.__all__) == sorted(TU.parametrizations.__all__)
