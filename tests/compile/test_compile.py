"""ember.compile: guards and recompiles, graph breaks, modules and training, the joint
backward, and torch's API (decorator, fullgraph, OptimizedModule, double backward)."""

from __future__ import annotations

import collections
import re

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember._compile import GraphBreak


def _entries(fn):
    return fn._ember_compiled.entries


def test_decorator_and_values_and_gradients():
    @ember.compile
    def f(x, w):
        return ((x * w).sin() + w.exp()).sum()

    @ember.compile(fullgraph=True)
    def g(x, w):
        return ((x * w).sin() + w.exp()).sum()

    for fn in (f, g):
        x = ember.randn(5, dtype=ember.float64)
        w = ember.randn(5, dtype=ember.float64, requires_grad=True)
        for _ in range(3):
            w.grad = None
            out = fn(x, w)
            assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
            out.backward()
            w2 = w.detach().requires_grad_()
            ((x * w2).sin() + w2.exp()).sum().backward()
            np.testing.assert_allclose(out.item(), ((x * w).sin() + w.exp()).sum().item())
            np.testing.assert_allclose(w.grad.numpy(), w2.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize(
    "body",
    [
        lambda x, w, i: x * ember.tensor(2) + 1,  # 0-d int64: x's float32 wins
        lambda x, w, i: x + ember.arange(5) * 0.5,  # int64 * Python float: float32
        lambda x, w, i: x * ember.exp(ember.arange(0, 5) * (-9.2 / 5)),  # positional codes
        lambda x, w, i: (x * i).sum(),  # float32 * int64 tensor
        lambda x, w, i: (x * w).tanh(),  # float32 * 0-d float64 (requires grad): float32
        lambda x, w, i: (i - w) / 3,  # int64 - 0-d float64: float64
        lambda x, w, i: x.sum() * (i > 0).sum(),  # a bool sum counts in int64
        lambda x, w, i: x * (i > 0).float().mean() + i.prod(1, keepdim=True),
    ],
)
def test_type_promotion_is_captured_with_the_eager_dtypes_values_and_gradients(body):
    """The eager ops cast operands to torch's result dtype before NumPy sees them (NumPy
    would give float64 for float32 * int64); the generated code casts them the same way."""
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((4, 5)).astype(np.float32), requires_grad=True)
    w = ember.tensor(0.3, dtype=ember.float64, requires_grad=True)
    i = ember.tensor(rng.integers(-3, 4, (4, 5)))
    f = ember.compile(body, fullgraph=True)
    for _ in range(2):
        x.grad = w.grad = None
        out = f(x, w, i)
        out.sum().backward()
        got = out.detach().numpy(), x.grad, w.grad
        x.grad = w.grad = None
        want_out = body(x, w, i)
        want_out.sum().backward()
        assert out.dtype == want_out.dtype
        # (fused kernels' exp and tanh are libmvec's: a float32 ulp from NumPy's)
        np.testing.assert_allclose(got[0], want_out.detach().numpy(), rtol=1e-6, atol=1e-7)
        for g, want in zip(got[1:], (x.grad, w.grad)):
            assert (g is None) == (want is None)
            if g is not None:
                assert g.dtype == want.dtype
                np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-6, atol=1e-7)
    assert "compiled" in f.explain()


def _sdpa_bool(q, mask):
    return F.scaled_dot_product_attention(q, q * 0.5, q, attn_mask=mask).square().sum()


def _sdpa_float(q, mask):
    bias = mask.float().log()  # 0 / -inf
    return F.scaled_dot_product_attention(q, q, q.tanh(), attn_mask=bias).square().sum()


ember.manual_seed(0)
_MHA = nn.MultiheadAttention(8, 2, batch_first=True)


def _mha(q, mask):
    x = q[0, 0].reshape(1, 4, 8).expand(2, 4, 8)  # a batch of 2 sequences of 4 tokens
    # the second sequence pads out the keys the mask's first row leaves out (not key 0)
    padding = mask[0].logical_not().unsqueeze(0) & ember.tensor([[False], [True]])
    return _MHA(x, x, x, attn_mask=mask.logical_not(), key_padding_mask=padding)[0].sum()


def _same_value_and_gradient(compiled, eager, x, arg, tolerances) -> None:
    """``compiled(x, arg)`` and ``eager(x, arg)`` (scalars): the same value and gradient
    of ``x`` within (value rtol, gradient rtol, gradient atol)."""
    results = []
    for fn in (compiled, eager):
        x.grad = None
        out = fn(x, arg)
        out.backward()
        results.append((out.item(), x.grad.numpy()))
    rtol, grad_rtol, grad_atol = tolerances
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=rtol)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=grad_rtol, atol=grad_atol)


@pytest.mark.parametrize("body", [_sdpa_bool, _sdpa_float, _mha])
def test_attention_masks_are_inputs_of_the_capture_not_constants(body):
    """A mask passed in is read at each call: two calls with other masks give eager's
    values and gradients (it was frozen as a constant, and the capture fell back)."""
    rng = np.random.default_rng(5)
    q = ember.tensor(rng.standard_normal((2, 2, 4, 8)).astype(np.float32), requires_grad=True)
    f = ember.compile(body, fullgraph=True)
    for seed in (1, 2):
        keep = np.random.default_rng(seed).random((4, 4)) < 0.6
        keep[:, 0] = True  # every query sees a key
        mask = ember.tensor(keep)
        _same_value_and_gradient(f, body, q, mask, (1e-5, 1e-4, 1e-6))
    assert len(_entries(f)) == 1 and "compiled" in f.explain()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_label_smoothing_cross_entropy_is_captured(weighted, reduction):
    rng = np.random.default_rng(7)
    x = ember.tensor(rng.standard_normal((6, 5)), requires_grad=True)
    weight = ember.tensor(rng.random(5) + 0.5) if weighted else None

    def loss(x, y):
        return F.cross_entropy(
            x, y, weight=weight, ignore_index=2, label_smoothing=0.2, reduction=reduction
        ).sum()

    f = ember.compile(loss, fullgraph=True)
    for seed in (1, 2):  # other targets: other classes ignored
        y = ember.tensor(np.random.default_rng(seed).integers(0, 5, 6))
        _same_value_and_gradient(f, loss, x, y, (1e-12, 1e-10, 1e-14))
    assert len(_entries(f)) == 1


def test_attention_rows_a_later_mask_kills_are_zeros_as_eagerly():
    """sdpa's math path (3-d inputs) zeros the rows a mask leaves no key for: the compiled
    code must not bake in the first call's answer to "is some row dead?"."""
    q = ember.randn(2, 4, 8, requires_grad=True)
    f = ember.compile(lambda q, m: F.scaled_dot_product_attention(q, q, q, attn_mask=m))
    for keep in (np.ones((4, 4), bool), np.tril(np.ones((4, 4), bool), -1)):  # row 0 dead
        mask = ember.tensor(keep)
        got, want = f(q, mask), F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)
        assert not np.isnan(got.detach().numpy()).any()
    assert "compiled" in f.explain()


def test_a_gpt_block_with_dropout_trains_compiled_as_eagerly():
    """nanoGPT's attention (sdpa with dropout_p in training, or masked_fill + softmax +
    nn.Dropout) and MLP with dropout: compiled in one piece, same loss and gradients as
    eager from the same seed."""

    class Block(nn.Module):
        def __init__(self, flash):
            super().__init__()
            self.qkv, self.proj = nn.Linear(16, 48), nn.Linear(16, 16)
            self.drop, self.flash = nn.Dropout(0.2), flash
            self.register_buffer("causal", ember.ones(6, 6).tril().view(1, 1, 6, 6))

        def forward(self, x):
            q, k, v = self.qkv(x).view(2, 6, 3, 2, 8).permute(2, 0, 3, 1, 4)
            if self.flash:
                p = 0.2 if self.training else 0.0
                y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * 8**-0.5
                att = att.masked_fill(self.causal == 0, float("-inf"))
                y = self.drop(F.softmax(att, dim=-1)) @ v
            return self.drop(self.proj(y.transpose(1, 2).reshape(2, 6, 16))).square().mean()

    for flash in (True, False):
        ember.manual_seed(0)
        block = Block(flash)
        x = ember.randn(2, 6, 16)
        compiled = ember.compile(block, fullgraph=True)
        for seed in (1, 2):
            results = []
            for fn in (compiled, block):
                ember.manual_seed(seed)
                block.zero_grad()
                loss = fn(x)
                loss.backward()
                results.append((loss.item(), [p.grad.numpy().copy() for p in block.parameters()]))
            np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-5)
            for a, b in zip(results[0][1], results[1][1]):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
        assert "runs eagerly" not in compiled.explain()


def test_guards_recompile_on_shape_dtype_requires_grad_and_grad_mode():
    f = ember.compile(lambda x: (x * 2).tanh().sum())
    f(ember.ones(3))
    f(ember.ones(3))
    assert len(_entries(f)) == 1
    f(ember.ones(4))
    f(ember.ones(3, dtype=ember.float64))
    f(ember.ones(3, requires_grad=True))
    with ember.no_grad():
        out = f(ember.ones(3, requires_grad=True))
    assert out.grad_fn is None and not out.requires_grad
    assert len(_entries(f)) == 5


def test_python_arguments_are_guarded_by_value():
    f = ember.compile(lambda x, k: x * k)
    assert f(ember.ones(2), 2).tolist() == [2.0, 2.0]
    assert f(ember.ones(2), 3).tolist() == [3.0, 3.0]


def test_cache_size_limit_falls_back_to_eager():
    f = ember.compile(lambda x: x + 1)
    for n in range(1, 12):
        assert f(ember.zeros(n)).shape == (n,)
    assert "cache_size_limit" in f.explain()


@pytest.mark.parametrize(
    "body, reason",
    [
        (lambda x: x * x.sum().item(), "Tensor.item()"),
        (lambda x: x if x.sum() > 0 else -x, "data-dependent control flow"),
        (lambda x: (print(x), x + 1)[1], "printing a tensor"),
        (lambda x: x.add_(1), "in-place"),
    ],
)
def test_graph_breaks_run_eagerly_and_say_why(body, reason, capsys):
    f = ember.compile(body)
    x = ember.tensor([1.0, -2.0, 3.0])
    want = body(x.clone())
    got = f(x.clone())
    assert ember.equal(got, want)
    assert reason in f.explain()
    assert ember.equal(f(x.clone()), body(x.clone()))  # and later calls run eagerly too


def test_fullgraph_raises_the_reason():
    f = ember.compile(lambda x: x * float(x.sum()), fullgraph=True)
    with pytest.raises(GraphBreak, match="float"):
        f(ember.ones(2))


def test_graph_break_report_names_the_source_line():
    def f(x):
        y = x.sin()
        return y * y.max().item()  # the line the report points at

    cf = ember.compile(f)
    cf(ember.ones(3))
    assert "y.max().item()" in cf.explain()


class _Branchy(nn.Module):
    """Blocks in a ModuleList, then a branch on a tensor's value (a graph break)."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(6, 6), nn.GELU()) for _ in range(2)])
        self.head = nn.Linear(6, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        if x.sum() > 0:
            x = x * 2
        return self.head(x).sum()


def test_a_module_that_breaks_runs_its_submodules_compiled():
    ember.manual_seed(0)
    model = _Branchy()
    compiled = ember.compile(model)
    seen = []
    model.head.register_forward_hook(lambda m, args, out: seen.append(out.shape))
    for x in (ember.randn(4, 6), -ember.ones(4, 6) * 3):  # both sides of the branch
        for _ in range(3):
            model.zero_grad()
            loss = compiled(x)
            loss.backward()
            got = [loss.item()] + [p.grad.numpy().copy() for p in model.parameters()]
        model.zero_grad()
        want = model(x)
        want.backward()
        np.testing.assert_allclose(got[0], want.item(), rtol=1e-6)
        for g, p in zip(got[1:], model.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert len(seen) == 8  # the submodule's hooks still run, compiled or not
    report = compiled.explain()
    assert "runs eagerly: data-dependent control flow" in report
    for name in ("blocks.0", "blocks.1", "head"):
        assert f"submodule {name}, compiled on its own:" in report, report
    assert "compiled: 3 ops" in report  # Linear + GELU as one graph
    # Nothing is left patched on the submodules, and the state_dict is the model's.
    assert all("forward" not in m.__dict__ for m in model.modules())
    assert list(compiled.state_dict()) == ["_orig_mod." + k for k in model.state_dict()]


def test_a_submodule_that_breaks_too_is_split_further():
    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            y = self.lin(x)
            return y * float(y.abs().max())  # a break inside the submodule

    outer = nn.Sequential(Inner(), nn.Tanh())
    compiled = ember.compile(outer)
    x = ember.randn(2, 3)
    for _ in range(3):  # the outer capture breaks, then Inner's, then lin's compiles
        out = compiled(x)
    np.testing.assert_allclose(out.detach().numpy(), outer(x).detach().numpy(), rtol=1e-6)
    report = compiled.explain()
    assert "submodule 0, compiled on its own:" in report
    assert "submodule lin, compiled on its own:" in report, report
    assert "submodule 1, compiled on its own:" in report


def test_values_inside_are_read_at_each_call_not_frozen():
    """Index tensors (targets) and parameters change between calls; results follow them."""
    w = nn.Parameter(ember.randn(4, 3))
    f = ember.compile(lambda x, y: F.cross_entropy(x @ w, y))
    x = ember.randn(5, 4)
    for seed in range(3):
        y = ember.randint(0, 3, (5,), generator=ember.Generator().manual_seed(seed))
        assert ember.allclose(f(x, y), F.cross_entropy(x @ w, y))
        with ember.no_grad():
            w.mul_(0.5)  # an optimizer step in between
    assert "runs eagerly" not in f.explain()


def test_random_ops_draw_fresh_numbers_each_call():
    f = ember.compile(lambda x: x + ember.rand_like(x))
    a, b = f(ember.zeros(4)), f(ember.zeros(4))
    assert not ember.equal(a, b)


@pytest.mark.parametrize("where", ["module", "functional", "inplace"])
def test_dropout_is_captured_and_draws_as_eagerly(where):
    """Dropout in training draws its mask at each compiled call, from the same generator
    and in the same order as eager code (same seed, same mask, same state after)."""
    ember.manual_seed(0)
    lin, drop = nn.Linear(6, 6), nn.Dropout(0.3)

    def step(x):
        h = lin(x)
        if where == "module":
            h = drop(h)
        elif where == "functional":
            h = F.dropout(h, 0.3, training=True)
        else:
            h = F.dropout(h * 2, 0.3, inplace=True)
        return h.tanh()

    f = ember.compile(step, fullgraph=True)
    x = ember.randn(5, 6)
    outs = []
    for seed in (1, 1, 2):
        ember.manual_seed(seed)
        got = f(x)
        got.sum().backward()
        got_grad, lin.weight.grad = lin.weight.grad, None
        after = ember.rand(1)
        ember.manual_seed(seed)
        want = step(x)
        want.sum().backward()
        # (fused kernels' tanh is libmvec's: within a float32 ulp or two of NumPy's)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(got_grad.numpy(), lin.weight.grad.numpy(), atol=1e-6)
        assert ember.equal(after, ember.rand(1))  # the generator advanced the same
        lin.weight.grad = None
        outs.append(got)
    same_mask = [(o == 0).tolist() for o in outs]
    assert same_mask[0] == same_mask[1] and same_mask[0] != same_mask[2]
    assert len(_entries(f)) == 1


def test_one_hot_with_its_class_count_is_captured():
    f = ember.compile(lambda y, w: (F.one_hot(y, 4).float() * w).sum(0), fullgraph=True)
    w = ember.ones(4, requires_grad=True)
    for labels in ([0, 3, 3], [1, 1, 2]):
        assert (
            f(ember.tensor(labels), w).tolist()
            == F.one_hot(ember.tensor(labels), 4).sum(0).float().tolist()
        )
    g = ember.compile(lambda y: F.one_hot(y).sum(0))  # the class count from the values
    g(ember.tensor([0, 1]))
    assert "runs eagerly" in g.explain()
    assert g(ember.tensor([0, 2])).tolist() == [1, 0, 1]


def test_module_training_matches_eager():
    def make():
        ember.manual_seed(0)
        return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).double()

    eager, base = make(), make()
    compiled = ember.compile(base)
    assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is base
    assert all(k.startswith("_orig_mod.") for k in compiled.state_dict())
    opt_e = ember.optim.SGD(eager.parameters(), lr=0.1, momentum=0.9)
    opt_c = ember.optim.SGD(compiled.parameters(), lr=0.1, momentum=0.9)
    rng = np.random.default_rng(0)
    for _ in range(20):
        x = ember.tensor(rng.standard_normal((16, 6)))
        y = ember.tensor(rng.integers(0, 3, 16))
        for model, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    for p, q in zip(eager.parameters(), base.parameters()):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert "runs eagerly" not in compiled.explain()


def test_module_train_eval_switch_recompiles():
    ember.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    c = ember.compile(net)
    x = ember.ones(2, 4)
    net.eval()
    assert ember.equal(c(x), net(x))
    net.train()
    c(x)
    assert len(c._compiled.entries) == 2


def test_module_guards_see_swapped_submodules_parameters_and_buffers():
    net = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    c = ember.compile(net)
    x = ember.randn(2, 3)
    assert ember.equal(c(x), net(x))
    net[1] = nn.Tanh()  # no parameters: only the module's identity tells the captures apart
    assert ember.equal(c(x), net(x))
    net[0].weight = nn.Parameter(ember.randn(3, 3))
    assert ember.equal(c(x), net(x))
    net[0].register_buffer("unused", ember.zeros(1))
    c(x)
    assert len(c._compiled.entries) == 4


def test_parameter_hooks_and_leaf_accumulation():
    lin = nn.Linear(3, 2)
    seen = []
    lin.weight.register_hook(lambda g: seen.append(g.shape))
    c = ember.compile(lin)
    for _ in range(2):
        c(ember.ones(4, 3)).sum().backward()
    assert seen == [(2, 3), (2, 3)]
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.full((2, 3), 8.0))


def test_backward_twice_needs_retain_graph_and_double_backward_raises():
    f = ember.compile(lambda x: (x * x).sum())
    x = ember.ones(3, requires_grad=True)
    f(x)
    out = f(x)
    out.backward(retain_graph=True)
    out.backward()
    with pytest.raises(RuntimeError, match="second time"):
        out.backward()
    (g,) = ember.autograd.grad(f(x), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 2.0)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        g.sum().backward()


def test_generated_code_is_readable():
    f = ember.compile(lambda x: x.exp().sum())
    f(ember.ones(3, requires_grad=True))
    code = f._ember_compiled.code
    assert "def forward(" in code and "def backward(" in code
    assert "ExpBackward0" in code  # each call names the ops it runs (fused or not)


def test_outputs_structure_and_aliases():
    f = ember.compile(lambda x, y: {"sum": x + y, "both": (x, y * 2), "n": 3})
    x, y = ember.ones(2), ember.ones(2)
    for _ in range(2):
        out = f(x, y)
        assert out["n"] == 3 and out["both"][0] is x
        assert out["sum"].tolist() == [2.0, 2.0] and out["both"][1].tolist() == [2.0, 2.0]


_Pair = collections.namedtuple("_Pair", "low high")


@pytest.mark.parametrize(
    "body",
    [
        lambda x: x.max(dim=1),
        lambda x: ember.median(x, 0, keepdim=True),
        lambda x: _Pair(x.min(1).values, x.amax(1)),
        lambda x: x.sort(1, descending=True),
        lambda x: ember.topk(x, 2, dim=0, largest=False),
        lambda x: x.kthvalue(2, 1, keepdim=True),
    ],
)
def test_named_tuples_and_return_types_are_returned_as_eagerly(body):
    x = ember.tensor(np.random.default_rng(2).permutation(20).reshape(4, 5) / 7.0)
    x.requires_grad_()
    f = ember.compile(body, fullgraph=True)
    for _ in range(2):
        got, want = f(x), body(x)
        assert type(got) is type(want) and repr(got).split("(")[0] == repr(want).split("(")[0]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())
        x.grad = None
        got[0].sum().backward()
        got_grad = x.grad
        x.grad = None
        want[0].sum().backward()
        np.testing.assert_array_equal(got_grad.numpy(), x.grad.numpy())


_EMB = nn.Embedding(5, 3)
_VALUE_CHECKS = {  # fn(x, i), good i, bad i (NumPy would read a negative index from the end)
    "cross_entropy": (lambda x, i: F.cross_entropy(x, i), [0, 1, 2, 3], [0, 1, -3, 3]),
    "nll_loss": (lambda x, i: F.nll_loss(x, i, ignore_index=-1), [0, -1, 2, 3], [0, 1, -2, 3]),
    "embedding": (lambda x, i: _EMB(i).sum() + x.sum(), [0, 1], [0, -1]),
    "gather": (lambda x, i: x.gather(1, i).sum(), [[0], [1], [2], [3]], [[0], [1], [-1], [3]]),
    "scatter": (
        lambda x, i: x.scatter(1, i, 1.0).sum(),
        [[0], [1], [2], [3]],
        [[4], [-1], [0], [0]],
    ),
    "index_select": (lambda x, i: x.index_select(0, i).sum(), [0, 1], [0, -1]),
    "index_add": (lambda x, i: x.index_add(0, i, x[:2]).sum(), [0, 3], [-4, 1]),
    "bce": (lambda x, i: F.binary_cross_entropy(i, x.sigmoid()), [[0.5] * 5] * 4, [[1.5] * 5] * 4),
    "gaussian_nll": (
        lambda x, i: F.gaussian_nll_loss(x, x * 2, i),
        [[1.0] * 5] * 4,
        [[-1.0] * 5] * 4,
    ),
}


@pytest.mark.parametrize("name", sorted(_VALUE_CHECKS))
def test_values_eager_code_checks_are_checked_by_the_generated_code(name):
    fn, good, bad = _VALUE_CHECKS[name]
    x = ember.randn(4, 5, requires_grad=True)
    f = ember.compile(fn)
    for _ in range(2):
        f(x, ember.tensor(good))
    assert "runs eagerly" not in f.explain(), f.explain()
    with pytest.raises(Exception) as want:
        fn(x, ember.tensor(bad))
    with pytest.raises(type(want.value), match=re.escape(str(want.value))):
        f(x, ember.tensor(bad))
    np.testing.assert_allclose(f(x, ember.tensor(good)).item(), fn(x, ember.tensor(good)).item())


def test_linalg_decompositions_compile_and_a_singular_matrix_gives_the_eager_error():
    def f(A, B):
        return (
            ember.linalg.solve(A, B).sum()
            + ember.linalg.svd(A).S.sum()
            + ember.linalg.qr(A).R.sum()
            + ember.linalg.eigh(A + A.mT, UPLO="U").eigenvalues.sum()
            + ember.linalg.pinv(A, atol=0.1).sum()
            + ember.linalg.solve_triangular(A.triu(), B, upper=True).sum()
        )

    rng = np.random.default_rng(4)
    A = ember.tensor(rng.standard_normal((3, 3)) + 3 * np.eye(3), requires_grad=True)
    B = ember.tensor(rng.standard_normal((3, 2)))
    c = ember.compile(f, fullgraph=True)
    for _ in range(2):
        A.grad = None
        c(A, B).backward()
        got = A.grad
        A.grad = None
        f(A, B).backward()
        np.testing.assert_allclose(got.numpy(), A.grad.numpy(), rtol=1e-9, atol=1e-12)
    with pytest.raises(ember.linalg.LinAlgError, match="the input matrix is singular"):
        c(ember.zeros(3, 3, dtype=ember.float64), B)


def test_bad_values_give_the_eager_error():
    f = ember.compile(lambda a: ember.linalg.cholesky(a))
    f(ember.eye(2, dtype=ember.float64))
    with pytest.raises(ember.linalg.LinAlgError, match="not positive-definite"):
        f(-ember.eye(2, dtype=ember.float64))


def test_compile_arguments():
    f = lambda x: x  # noqa: E731
    assert ember.compile(f, disable=True) is f
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(f, mode="max-autotune", options={})


def test_nested_compiled_functions_inline_and_forward_ad_runs_eagerly():
    inner = ember.compile(lambda x: x.sin() * 2)
    outer = ember.compile(lambda x: inner(x).exp().sum())
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    for _ in range(2):
        (g,) = ember.autograd.grad(outer(x), x)
        np.testing.assert_allclose(g.numpy(), (2 * x.cos() * (2 * x.sin()).exp()).detach().numpy())
    assert "runs eagerly" not in outer.explain()
    import ember.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), ember.ones(3, dtype=ember.float64))
        tangent = fwAD.unpack_dual(inner(dual)).tangent
    np.testing.assert_allclose(tangent.numpy(), (2 * x.cos()).detach().numpy())


@pytest.mark.parametrize("momentum", [0.1, None])
def test_batchnorm_training_compiles_with_its_running_statistics(momentum):
    """Buffers updated in place (running stats, num_batches_tracked) are side effects the
    generated code replays; the cumulative average (momentum=None) reads a buffer's value
    and runs eagerly."""

    def make():
        ember.manual_seed(0)
        return nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1),
            nn.BatchNorm2d(4, momentum=momentum),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(4 * 6 * 6, 3),
        ).double()

    eager, base = make(), make()
    compiled = ember.compile(base)
    opt_e = ember.optim.SGD(eager.parameters(), lr=0.1)
    opt_c = ember.optim.SGD(base.parameters(), lr=0.1)
    rng = np.random.default_rng(0)
    for _ in range(4):
        x = ember.tensor(rng.standard_normal((8, 1, 6, 6)))
        y = ember.tensor(rng.integers(0, 3, 8))
        for model, opt in ((eager, opt_e), (compiled, opt_c)):
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    for (name, a), (_, b) in zip(eager.state_dict().items(), base.state_dict().items()):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14, err_msg=name)
    assert int(base[1].num_batches_tracked) == 4
    report = compiled.explain()
    if momentum is None:
        assert "cumulative average" in report
    else:
        assert "runs eagerly" not in report, report


def test_inplace_ops_on_values_made_inside_compile():
    """``out += x`` and ``ReLU(inplace=True)`` on intermediates: the op out of place, the
    tensor renamed to its result; in-place changes of inputs stay graph breaks."""

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.lin(x)
            out += x
            return self.act(out).sum()

    ember.manual_seed(0)
    block = Block().double()
    compiled = ember.compile(block)
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    for _ in range(2):
        x.grad = None
        got = compiled(x)
        got.backward()
        g = x.grad.clone()
    x.grad = None
    want = block(x)
    want.backward()
    np.testing.assert_allclose(got.item(), want.item(), rtol=1e-12)
    np.testing.assert_allclose(g.numpy(), x.grad.numpy(), rtol=1e-12)
    assert "runs eagerly" not in compiled.explain()


def test_autograd_grad_inside_the_region_is_captured():
    """A Hessian-vector product (W4's shape): both autograd.grad calls are captured, the
    result takes no gradient (create_graph=False), as eager's."""

    def hvp(a, v, x):
        y = (ember.tanh(a @ x) ** 2).sum()
        (g,) = ember.autograd.grad(y, x, create_graph=True)
        (hv,) = ember.autograd.grad(g @ v, x)
        return y.detach(), hv

    rng = np.random.default_rng(0)
    a, v = ember.tensor(rng.standard_normal((6, 6))), ember.tensor(rng.standard_normal(6))
    x = ember.tensor(rng.standard_normal(6), requires_grad=True)
    f = ember.compile(hvp)
    want = hvp(a, v, x)
    for _ in range(2):
        got = f(a, v, x)
        for w, g in zip(want, got):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
            assert g.requires_grad is w.requires_grad is False
    assert "compiled: " in f._ember_compiled.explain()


def test_autograd_grad_with_create_graph_differentiates_through_the_compiled_call():
    def first_derivative(x):
        (g,) = ember.autograd.grad((x**3).sum(), x, create_graph=True)
        return g

    f = ember.compile(first_derivative)
    for _ in range(2):
        x = ember.tensor([0.5, -1.0, 2.0], requires_grad=True)
        g = f(x)
        assert g.requires_grad
        np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
        g.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 6 * x.detach().numpy())
    assert "runs eagerly" not in f._ember_compiled.explain()


def test_an_input_changed_in_place_before_backward_raises_as_eagerly():
    """The compiled backward reads the input's array: changing it in place in between
    raises torch's error (it was silently used before), as eager's saved-tensor check."""

    def fn(x, w):
        return (x * w).sum()

    f = ember.compile(fn)
    messages = []
    for g in (fn, f, f):
        x = ember.ones(3, requires_grad=True)
        w = ember.full((3,), 2.0, requires_grad=True)
        out = g(x, w)
        with ember.no_grad():
            x.mul_(2)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            out.backward()
        messages.append(str(info.value))
    assert messages[1] == messages[2] == messages[0]
