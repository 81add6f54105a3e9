"""torch.compiler and torch._dynamo's names around ember.compile."""

from __future__ import annotations

import pytest

import ember
from ember import _compile


def test_is_compiling_is_true_for_every_call_of_a_compiled_function():
    f = ember.compile(lambda x: x + (1.0 if ember.compiler.is_compiling() else 0.0))
    assert [f(ember.zeros(1)).item() for _ in range(3)] == [1.0, 1.0, 1.0]
    assert "compiled" in f.explain()
    assert not ember.compiler.is_compiling() and not ember._dynamo.is_compiling()
    # a function that breaks the graph runs eagerly, still inside the compiled call
    g = ember.compile(lambda x: x * x.sum().item() + ember.compiler.is_compiling())
    assert [g(ember.ones(2)).tolist() for _ in range(2)] == [[3.0, 3.0], [3.0, 3.0]]
    assert "runs eagerly" in g.explain()


def test_a_disabled_function_runs_eagerly_and_says_so():
    calls = []

    @ember.compiler.disable
    def debug(x):
        calls.append(x.sum().item())
        return x * 2

    f = ember.compile(lambda x: debug(x) + 1)
    assert f(ember.ones(2)).tolist() == [3.0, 3.0]
    assert f(ember.ones(2)).tolist() == [3.0, 3.0]
    assert "torch.compiler.disable'd function (debug)" in f.explain()
    assert calls == [2.0, 2.0]
    with pytest.raises(_compile.GraphBreak, match="disable'd function"):
        ember.compile(lambda x: debug(x), fullgraph=True)(ember.ones(2))
    assert debug(ember.ones(1)).tolist() == [2.0]  # eager: just the function


def test_reset_forgets_every_capture():
    f = ember.compile(lambda x: x.sin() * 2)
    x = ember.ones(3)
    f(x)
    compiled = [c for c in list(_compile._ALL) if c.cache]
    assert compiled
    ember.compiler.reset()
    assert all(not c.cache and c.n_entries == 0 for c in compiled)
    assert f(x).tolist() == (x.sin() * 2).tolist()
    ember._dynamo.reset()


def test_dynamo_config_cache_size_limit_is_the_compilers():
    config = ember._dynamo.config
    before = config.cache_size_limit
    assert before == _compile.CACHE_SIZE_LIMIT
    try:
        config.cache_size_limit = 2
        assert _compile.CACHE_SIZE_LIMIT == 2 and config.recompile_limit == 2
        f = ember.compile(lambda x: x * 2)
        for n in (1, 2, 3, 4):
            f(ember.ones(n))
        assert "cache_size_limit (2) reached" in f.explain()
    finally:
        config.cache_size_limit = before
    config.suppress_errors = True  # kept, no effect
    assert config.suppress_errors is True
    with pytest.raises(AttributeError):
        config.no_such_setting  # noqa: B018
    assert ember._dynamo.mark_dynamic(ember.ones(2), 0) is None
