"""gradcheck / gradgradcheck: every keyword of torch 2.13, each check passing and failing.

Every case runs in ember and, when it is installed, in torch: both must pass or fail
alike, with the same exception type and (where ember can produce it) the same message.
Random vectors (fast mode, batched checks, generated grad_outputs) come from different
generators in the two libraries, so messages that print them are compared up to there.
"""

import inspect
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import GradcheckError, gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # pragma: no cover - the comparisons are skipped, the checks still run
    torch = None

LIBS = [ember] if torch is None else [ember, torch]

# The warnings gradcheck itself gives (torch also warns about torch.jit while importing).
_OUR_WARNINGS = ("Backwards compatibility: New undefined gradient", "Input #")


def _outcome(M, make):
    """``("returned", value)`` or ``(exception type name, message)``, and the warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returned", make(M))
        except Exception as e:  # noqa: BLE001
            result = (type(e).__name__, str(e))
    warned = [str(w.message) for w in caught if str(w.message).startswith(_OUR_WARNINGS)]
    return result, warned


def _same(make, cut=None):
    """Run ``make(M)`` in every library; all give the same outcome. ``cut`` (a marker)
    compares messages only up to the marker. Returns ember's ``(result, warnings)``."""
    got = [_outcome(M, make) for M in LIBS]
    if cut is not None:
        got = [((kind, text.split(cut)[0]), warned) for (kind, text), warned in got]
    for other in got[1:]:
        assert other == got[0]
    return got[0]


def _t(M, values, requires_grad=True):
    return M.tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


def _x(M):
    return _t(M, [0.1, 0.5])


# -- custom Functions with deliberate bugs ---------------------------------------------------


def _square(M, bwd_factor=2, jvp_factor=2):
    """x * x; backward and jvp use ``factor * x`` (2 is right)."""

    class Square(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x * bwd_factor

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return t * x * jvp_factor

    return Square


def _counting(M, *, after=None, noise=0.0):
    """x * 2 whose backward and jvp change after ``after`` calls (state leaking between
    calls), or whose backward is off by ``noise * call number`` (nondeterminism)."""
    calls = {"bwd": 0, "jvp": 0}

    def factor(kind):
        calls[kind] += 1
        if after is not None and calls[kind] > after:
            return 3.0
        return 2.0 + noise * calls[kind]

    class Counting(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * factor("bwd")

        @staticmethod
        def jvp(ctx, t):
            return t * factor("jvp")

    return Counting


def _two_outputs(M, on_undefined=None):
    """(2x, 3x) without materialized grads. With ``on_undefined`` the backward mishandles a
    missing grad_output when the other one is zero: raises, or takes it as ones."""

    class TwoOutputs(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            if g1 is None and g2 is None:
                return None
            if g2 is None:
                g2 = M.zeros_like(g1)
            if g1 is None:
                if on_undefined is not None and bool((g2 == 0).all()):
                    if on_undefined == "raise":
                        raise RuntimeError("cannot handle an undefined grad_output")
                    g1 = M.ones_like(g2)
                else:
                    g1 = M.zeros_like(g2)
            return 2 * g1 + 3 * g2

        @staticmethod
        def jvp(ctx, t):
            return t * 2, t * 3

    return TwoOutputs


def _add_to_zero_grad(M, extra):
    """x * 2 whose backward adds ``extra`` when grad_output is all zero."""

    class AddsToZero(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + float(bool((g == 0).all())) * extra

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    return AddsToZero


def _detached_backward(M):
    """x ** 3 whose backward detaches x: right first derivative, zero second one."""

    class Detached(M.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.save_for_forward(x)
            return x**3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x.detach() ** 2 * g

        @staticmethod
        def jvp(ctx, t):
            (x,) = ctx.saved_tensors
            return 3 * x**2 * t

    return Detached


# -- signatures ------------------------------------------------------------------------------

GRADCHECK_KW = [
    ("eps", 1e-06),
    ("atol", 1e-05),
    ("rtol", 0.001),
    ("raise_exception", True),
    ("nondet_tol", 0.0),
    ("check_undefined_grad", True),
    ("check_grad_dtypes", False),
    ("check_batched_grad", False),
    ("check_batched_forward_grad", False),
    ("check_forward_ad", False),
    ("check_backward_ad", True),
    ("fast_mode", False),
    ("masked", None),
]
GRADGRADCHECK_KW = [
    ("eps", 1e-06),
    ("atol", 1e-05),
    ("rtol", 0.001),
    ("gen_non_contig_grad_outputs", False),
    ("raise_exception", True),
    ("nondet_tol", 0.0),
    ("check_undefined_grad", True),
    ("check_grad_dtypes", False),
    ("check_batched_grad", False),
    ("check_fwd_over_rev", False),
    ("check_rev_over_rev", True),
    ("fast_mode", False),
    ("masked", False),
]


def _shape(fn) -> list:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize(
    "name, positional, keywords",
    [
        ("gradcheck", ["func", "inputs"], GRADCHECK_KW),
        ("gradgradcheck", ["func", "inputs", "grad_outputs"], GRADGRADCHECK_KW),
    ],
)
def test_signatures_match_torch(name, positional, keywords):
    ours = _shape(getattr(ember.autograd, name))
    P, K = inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY
    expected = [(n, P, inspect.Parameter.empty) for n in positional]
    if name == "gradgradcheck":
        expected[-1] = ("grad_outputs", P, None)  # optional, positional
    expected += [(n, K, d) for n, d in keywords]
    assert ours == expected
    if torch is not None:
        assert ours == _shape(getattr(torch.autograd, name))


# -- passing checks --------------------------------------------------------------------------

ALL_ON = dict(
    check_forward_ad=True,
    check_batched_grad=True,
    check_batched_forward_grad=True,
    check_grad_dtypes=True,
)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        ALL_ON,
        dict(ALL_ON, fast_mode=True),
        dict(check_forward_ad=True, check_backward_ad=False, check_batched_forward_grad=True),
        dict(masked=True),
        dict(masked=False, check_undefined_grad=False, nondet_tol=1e-12),
        dict(eps=1e-5, atol=1e-4, rtol=1e-2),
    ],
    ids=["defaults", "all_checks", "all_checks_fast", "forward_only", "masked", "misc", "tols"],
)
def test_correct_functions_pass_every_check(kwargs):
    def make(M):
        a = _t(M, [[0.1, 0.5], [-0.3, 0.2]])
        b = _t(M, [1.0, -2.0])
        k = _t(M, [0.5, 0.25], requires_grad=False)
        results = [
            M.autograd.gradcheck(
                lambda x, y, z: ((x * y).tanh() * z, x.exp()), (a, b, k), **kwargs
            ),
            M.autograd.gradcheck(_square(M).apply, (_x(M),), **kwargs),
            M.autograd.gradcheck(lambda x: [x, x * 3.0], _x(M), **kwargs),  # list, identity
            M.autograd.gradcheck(lambda x, n: x.sin() * n, (_t(M, 0.7), 3), **kwargs),  # 0-d
        ]
        if kwargs.get("check_backward_ad", True):
            results.append(M.autograd.gradcheck(_two_outputs(M).apply, (_x(M),), **kwargs))
        return results

    (kind, value), _ = _same(make)
    assert kind == "returned" and all(r is True for r in value)


# -- the Jacobian checks: reverse mode, forward mode, fast mode -------------------------------


def test_wrong_backward_is_caught_with_torchs_message():
    (kind, msg), _ = _same(lambda M: M.autograd.gradcheck(_square(M, bwd_factor=1).apply, _x(M)))
    assert kind == "GradcheckError"
    assert msg == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[0.2000, 0.0000],\n        [0.0000, 1.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[0.1000, 0.0000],\n        [0.0000, 0.5000]], dtype=torch.float64)\n"
    )


def test_mismatch_names_the_output_and_input():
    def make(M):
        Square = _square(M, bwd_factor=1)
        return M.autograd.gradcheck(lambda a, b: (a * 2, Square.apply(b)), (_x(M), _x(M)))

    (kind, msg), _ = _same(make)
    assert kind == "GradcheckError"
    assert msg.startswith("Jacobian mismatch for output 1 with respect to input 1,\n")


def test_wrong_jvp_is_caught_by_check_forward_ad_only():
    def make(check_forward_ad):
        return lambda M: M.autograd.gradcheck(
            _square(M, jvp_factor=3).apply, (_x(M),), check_forward_ad=check_forward_ad
        )

    (kind, msg), _ = _same(make(True))
    assert kind == "GradcheckError"
    assert msg == (
        "Jacobian computed with forward mode mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[0.2000, 0.0000],\n        [0.0000, 1.0000]], dtype=torch.float64)\n"
        "analytical:tensor([[0.3000, 0.0000],\n        [0.0000, 1.5000]], dtype=torch.float64)\n"
    )
    assert _same(make(False))[0] == ("returned", True)


def test_check_backward_ad_false_skips_every_reverse_mode_check():
    def make(M, **kw):
        # wrong backward, and it is not even linear in grad_output
        Bad = _add_to_zero_grad(M, 1.0)
        wrong = _square(M, bwd_factor=1)
        return [
            M.autograd.gradcheck(F.apply, (_x(M),), check_forward_ad=True, **kw)
            for F in (Bad, wrong)
        ]

    assert _same(lambda M: make(M, check_backward_ad=False))[0] == ("returned", [True, True])
    assert _same(lambda M: make(M))[0][0] == "GradcheckError"


@pytest.mark.parametrize("use_forward_ad", [False, True], ids=["reverse", "forward"])
def test_fast_mode_catches_a_wrong_derivative(use_forward_ad):
    kw = dict(jvp_factor=3) if use_forward_ad else dict(bwd_factor=1)

    def make(M):
        F = _square(M, **kw)
        return M.autograd.gradcheck(
            F.apply,
            (_x(M),),
            fast_mode=True,
            check_forward_ad=use_forward_ad,
            check_backward_ad=not use_forward_ad,
        )

    # v^T J u (or J u) uses each library's own random u, v: the numbers after "numerical:"
    # differ, the slow-mode recomputation that follows is the same.
    results = [_outcome(M, make)[0] for M in LIBS]
    mode = "computed with forward mode " if use_forward_ad else ""
    for kind, msg in results:
        assert kind == "GradcheckError"
        assert msg.startswith(
            f"Jacobian {mode}mismatch for output 0 with respect to input 0,\nnumerical:"
        )
        assert "Below, we recompute numerical and analytical jacobians in slow mode" in msg
    tails = {msg.split("The above quantities")[1] for _, msg in results}
    assert len(tails) == 1


def test_fast_mode_is_deterministic_and_leaves_the_global_generator_alone():
    ember.manual_seed(0)
    state = ember.get_rng_state()
    F = _square(ember, bwd_factor=1.001)  # off by 0.1%: within what fast mode may miss

    def message():
        try:
            gradcheck(F.apply, (_x(ember),), fast_mode=True, rtol=1e-6, atol=1e-9)
        except GradcheckError as e:
            return str(e)
        return None

    first = message()
    assert first is not None and first == message()
    assert np.array_equal(ember.get_rng_state().numpy(), state.numpy())


def test_outputs_without_gradients():
    def make(M):
        x = _x(M)
        return [
            M.autograd.gradcheck(lambda a: a.detach() * 0, (x,)),
            M.autograd.gradcheck(lambda a: (a * 2, a.detach()), (x,)),  # not checked
            M.autograd.gradcheck(lambda a: a.detach() * 0, (x,), fast_mode=True),
        ]

    assert _same(make)[0] == ("returned", [True, True, True])
    for fast in (False, True):
        (kind, msg), _ = _same(
            lambda M, fast=fast: M.autograd.gradcheck(
                lambda a: a.detach() * 2, (_x(M),), fast_mode=fast
            )
        )
        assert (kind, msg) == (
            "GradcheckError",
            "Numerical gradient for function expected to be zero",
        )


# -- nondet_tol (reentrancy) -----------------------------------------------------------------


@pytest.mark.parametrize("fast_mode", [False, True], ids=["slow", "fast"])
def test_nondet_tol_bounds_the_difference_between_two_backwards(fast_mode):
    def make(nondet_tol):
        return lambda M: M.autograd.gradcheck(
            _counting(M, noise=1e-9).apply, (_x(M),), nondet_tol=nondet_tol, fast_mode=fast_mode
        )

    (kind, msg), _ = _same(make(0.0))
    assert kind == "GradcheckError"
    assert msg.startswith(
        "Backward is not reentrant, i.e., running backward with same input and grad_output "
        "multiple times gives different values, although analytical gradient matches "
        "numerical gradient.The tolerance for nondeterminism was 0.0.\n\nNOTE:"
    )
    assert _same(make(1e-6))[0] == ("returned", True)


# -- check_undefined_grad --------------------------------------------------------------------


@pytest.mark.parametrize(
    "on_undefined, expected",
    [
        ("raise", "Expected backward function to handle undefined output grads."),
        ("ones", "Expected all input grads to be undefined or zero when all output grads"),
    ],
)
def test_check_undefined_grad_catches_a_backward_mishandling_none(on_undefined, expected):
    def make(check):
        return lambda M: M.autograd.gradcheck(
            _two_outputs(M, on_undefined).apply, (_x(M),), check_undefined_grad=check
        )

    (kind, msg), warned = _same(make(True))
    assert kind == "GradcheckError" and msg.startswith(expected)
    assert msg.endswith(
        'Please look at "Notes about undefined output gradients" in '
        '"tools/autograd/derivatives.yaml"'
    )
    assert len(warned) == 1 and warned[0].startswith("Backwards compatibility")
    # The Jacobians are right: only the undefined-gradient check sees the bug.
    assert _same(make(False)) == (("returned", True), [])


def _drops_an_undefined_tangent(M):
    """x * y whose tangent doubles when y has no tangent (a rule mishandling None)."""
    fw = M.autograd.forward_ad

    def f(x, y):
        out = x * y
        primal, tangent = fw.unpack_dual(out)
        if tangent is not None and fw.unpack_dual(y).tangent is None:
            return fw.make_dual(primal.detach(), tangent * 2)
        return out

    return f


def test_check_undefined_grad_in_forward_mode():
    def make(check):
        return lambda M: M.autograd.gradcheck(
            _drops_an_undefined_tangent(M),
            (_x(M), _t(M, [0.3, 0.2])),
            check_forward_ad=True,
            check_undefined_grad=check,
        )

    # The tangents printed come from each library's random directions.
    (kind, msg), _ = _same(make(True), cut=" Got: ")
    assert kind == "GradcheckError"
    assert msg == (
        "('Mismatch in tangent values for output with index: ', 0, ' when input: ', "
        "tensor([0.3000, 0.2000], dtype=torch.float64, requires_grad=True), ' has an "
        "undefined tangent value. ', '"
    )
    assert _same(make(False))[0] == ("returned", True)


# -- backward multiplied by grad_output, masked ----------------------------------------------


@pytest.mark.parametrize("masked", [None, False, True])
def test_zero_grad_output_must_give_zero_grads(masked):
    def make(extra):
        return lambda M: M.autograd.gradcheck(
            _add_to_zero_grad(M, extra).apply,
            (_x(M),),
            masked=masked,
            check_undefined_grad=False,
        )

    assert _same(make(1.0))[0] == ("GradcheckError", "backward not multiplied by grad_output")
    # masked=True compares with allclose (dense tensors: nothing else changes), so a
    # tiny residue passes; otherwise the gradients must be exactly zero.
    tiny = _same(make(1e-12))[0]
    if masked:
        assert tiny == ("returned", True)
    else:
        assert tiny == ("GradcheckError", "backward not multiplied by grad_output")


# -- check_grad_dtypes -----------------------------------------------------------------------


def test_gradients_take_their_inputs_dtype_even_for_float32_outputs():
    # The output is float32; its gradient is cast back to the float64 input's dtype.
    def make(M):
        return M.autograd.gradcheck(
            lambda a: (a * 2).float(), (_x(M),), check_grad_dtypes=True, atol=1e-2, rtol=1e-2
        )

    assert _same(make)[0] == ("returned", True)


def test_check_grad_dtypes_catches_a_reverse_mode_gradient_of_another_dtype(monkeypatch):
    # Neither engine lets a gradient change dtype, so the bug is planted in autograd.grad.
    real_grad = ember.autograd.api.grad

    def float32_grad(*args, **kwargs):
        return tuple(None if g is None else g.float() for g in real_grad(*args, **kwargs))

    monkeypatch.setattr(ember.autograd.api, "grad", float32_grad)
    x = _x(ember)
    with pytest.raises(GradcheckError, match="^Gradient has dtype mismatch$"):
        gradcheck(lambda a: a * 2, (x,), check_grad_dtypes=True)
    # Without the flag, torch's check on the gradients of a zero grad_output still sees it.
    with pytest.raises(GradcheckError, match="^grad is incorrect type$"):
        gradcheck(lambda a: a * 2, (x,))
    assert gradcheck(lambda a: a * 2, (x,), check_grad_dtypes=True, raise_exception=False) is False


def test_check_grad_dtypes_catches_a_tangent_of_another_dtype(monkeypatch):
    fw = ember.autograd.forward_ad
    real_unpack = fw.unpack_dual

    def float32_tangent(tensor, *, level=None):
        primal, tangent = real_unpack(tensor, level=level)
        return fw.UnpackedDualTensor(primal, None if tangent is None else tangent.float())

    monkeypatch.setattr(fw, "unpack_dual", float32_tangent)
    kw = dict(check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False)
    x = _x(ember)
    with pytest.raises(GradcheckError, match=r"^Forward AD gradient has dtype mismatch\.$"):
        gradcheck(lambda a: a * 2, (x,), check_grad_dtypes=True, **kw)
    assert gradcheck(lambda a: a * 2, (x,), **kw)


# -- check_batched_grad / check_batched_forward_grad ----------------------------------------


@pytest.mark.parametrize("forward", [False, True], ids=["backward", "forward"])
def test_batched_gradients_must_equal_per_sample_ones(forward):
    # A derivative that changes after the calls the Jacobian check makes (2 rows twice in
    # reverse mode, 2 columns in forward mode) plus the 2 per-sample ones: the batched
    # evaluation (vmap in torch, sample by sample in ember) sees it.
    after = 4 if forward else 6
    flag = "check_batched_forward_grad" if forward else "check_batched_grad"
    kw = dict(check_undefined_grad=False)
    if forward:
        kw.update(check_forward_ad=True, check_backward_ad=False)

    def make(check):
        return lambda M: M.autograd.gradcheck(
            _counting(M, after=after).apply, (_x(M),), **kw, **{flag: check}
        )

    (kind, msg), _ = _same(make(True), cut="\nGot:")
    assert kind == "GradcheckError"
    header = "with forward-mode AD" if forward else "computation.\nThis could have"
    assert msg.startswith("For output 0 and input 0:\n\n")
    assert header in msg
    assert _same(make(False))[0] == ("returned", True)


# -- raise_exception -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    ["backward", "forward", "fast", "nondet", "undefined", "not_multiplied", "batched", "gradgrad"],
)
def test_raise_exception_false_returns_false(case):
    def make(M):
        x = _x(M)
        gc = M.autograd.gradcheck
        kw = dict(raise_exception=False)
        return {
            "backward": lambda: gc(_square(M, bwd_factor=1).apply, (x,), **kw),
            "forward": lambda: gc(
                _square(M, jvp_factor=3).apply, (x,), check_forward_ad=True, **kw
            ),
            "fast": lambda: gc(_square(M, bwd_factor=1).apply, (x,), fast_mode=True, **kw),
            "nondet": lambda: gc(_counting(M, noise=1e-9).apply, (x,), **kw),
            "undefined": lambda: gc(_two_outputs(M, "ones").apply, (x,), **kw),
            "not_multiplied": lambda: gc(_add_to_zero_grad(M, 1.0).apply, (x,), **kw),
            "batched": lambda: gc(_counting(M, after=6).apply, (x,), check_batched_grad=True, **kw),
            "gradgrad": lambda: M.autograd.gradgradcheck(_detached_backward(M).apply, (x,), **kw),
        }[case]()

    assert _same(make)[0] == ("returned", False)


def test_raise_exception_false_still_raises_usage_errors():
    (kind, msg), _ = _same(
        lambda M: M.autograd.gradcheck(
            lambda a: a, _x(M), check_backward_ad=False, raise_exception=False
        )
    )
    assert (kind, msg) == (
        "AssertionError",
        "Expected at least one of check_forward_ad or check_backward_ad to be True",
    )


# -- argument and input errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(check_backward_ad=False),
            "Expected at least one of check_forward_ad or check_backward_ad to be True",
        ),
        (
            dict(check_forward_ad=True, check_backward_ad=False, check_batched_grad=True),
            "Setting check_batched_grad=True requires check_backward_ad to be True",
        ),
        (
            dict(check_batched_forward_grad=True),
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True",
        ),
    ],
)
def test_gradcheck_flag_combinations(kwargs, message):
    assert _same(lambda M: M.autograd.gradcheck(lambda a: a, _x(M), **kwargs))[0] == (
        "AssertionError",
        message,
    )


def test_input_errors_and_warnings():
    (kind, msg), _ = _same(lambda M: M.autograd.gradcheck(lambda a: a * 2, _t(M, [1.0], False)))
    assert kind == "ValueError" and msg.startswith("gradcheck expects at least one input tensor")
    (kind, msg), _ = _same(
        lambda M: M.autograd.gradcheck(
            lambda a: a * 2, _t(M, [1.0], False).expand(3).requires_grad_()
        )
    )
    assert kind == "RuntimeError" and msg.startswith("The 0th input has a dimension with stride 0")
    (kind, _), warned = _same(
        lambda M: M.autograd.gradcheck(lambda a: a * 2, (M.ones(2, requires_grad=True),), atol=0.1)
    )
    assert kind == "returned"
    assert warned == [
        "Input #0 requires gradient and is not a double precision floating point or complex. "
        "This check will likely fail if all the inputs are not of double precision floating "
        "point or complex. "
    ]


def test_complex_inputs_are_refused_clearly():
    z = ember.tensor([1 + 2j], dtype=ember.complex128, requires_grad=True)
    with pytest.raises(NotImplementedError, match="complex"):
        gradcheck(lambda a: a * 2, (z,))


# -- gradgradcheck ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        dict(check_fwd_over_rev=True),
        dict(check_fwd_over_rev=True, check_rev_over_rev=False, check_undefined_grad=False),
        dict(fast_mode=True, check_fwd_over_rev=True),
        dict(gen_non_contig_grad_outputs=True, check_batched_grad=True, check_grad_dtypes=True),
        dict(masked=True, nondet_tol=1e-12),
    ],
    ids=["defaults", "fwd_over_rev", "fwd_over_rev_only", "fast", "noncontig_batched", "misc"],
)
def test_gradgradcheck_passes_with_every_keyword(kwargs):
    def make(M):
        a, b = _t(M, [[0.1, 0.5], [-0.3, 0.2]]), _t(M, [[1.0, -2.0], [0.5, 1.5]])
        return [
            M.autograd.gradgradcheck(lambda x, y: (x * y).sin() * y, (a, b), **kwargs),
            M.autograd.gradgradcheck(_square(M).apply, (_x(M),), **kwargs),
        ]

    assert _same(make)[0] == ("returned", [True, True])


def test_gradgradcheck_catches_a_detached_backward():
    def make(**kw):
        return lambda M: M.autograd.gradgradcheck(
            _detached_backward(M).apply, (_x(M),), _t(M, [1.0, -0.5]), **kw
        )

    (kind, msg), _ = _same(make())
    assert kind == "GradcheckError"
    assert msg == (
        "Jacobian mismatch for output 0 with respect to input 0,\n"
        "numerical:tensor([[ 0.6000,  0.0000],\n        [ 0.0000, -1.5000]], "
        "dtype=torch.float64)\n"
        "analytical:tensor([[0., 0.],\n        [0., 0.]], dtype=torch.float64)\n"
    )
    # Forward over reverse sees it too (torch prints its analytical Jacobian with a grad_fn).
    fwd_only = dict(check_fwd_over_rev=True, check_rev_over_rev=False, check_undefined_grad=False)
    (kind, msg), _ = _same(make(**fwd_only), cut="analytical:")
    assert kind == "GradcheckError"
    assert msg.startswith("Jacobian computed with forward mode mismatch for output 0 with ")
    assert _outcome(ember, make(**fwd_only))[0][1].endswith(
        "analytical:tensor([[0., 0.],\n        [0., 0.]], dtype=torch.float64)\n"
    )
    (kind, msg), _ = _same(make(fast_mode=True), cut="numerical:")
    assert kind == "GradcheckError"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(check_rev_over_rev=False),
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True",
        ),
        (
            dict(check_rev_over_rev=False, check_fwd_over_rev=True),
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True",
        ),
        (
            dict(
                check_rev_over_rev=False,
                check_fwd_over_rev=True,
                check_undefined_grad=False,
                check_batched_grad=True,
            ),
            "Setting check_batched_grad=True requires check_rev_over_rev to be True",
        ),
    ],
)
def test_gradgradcheck_flag_combinations(kwargs, message):
    assert _same(lambda M: M.autograd.gradgradcheck(lambda a: a * a, _x(M), **kwargs))[0] == (
        "AssertionError",
        message,
    )


@pytest.mark.parametrize("noncontiguous", [False, True])
def test_gen_non_contig_grad_outputs(monkeypatch, noncontiguous):
    seen = []
    real_grad = ember.autograd.api.grad

    def spy(outputs, inputs, grad_outputs=None, *args, **kwargs):
        if kwargs.get("create_graph"):
            seen.extend(g.is_contiguous() for g in grad_outputs)
        return real_grad(outputs, inputs, grad_outputs, *args, **kwargs)

    monkeypatch.setattr(ember.autograd.api, "grad", spy)
    x = _t(ember, [[0.1, 0.5], [-0.3, 0.2]])
    assert gradgradcheck(lambda a: a.sin() * a, (x,), gen_non_contig_grad_outputs=noncontiguous)
    assert seen and all(c is not noncontiguous for c in seen)
