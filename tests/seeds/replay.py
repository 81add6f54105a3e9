"""Replay a seed transcript's cells, as a notebook runs them, under ember (or real torch).

A seed test lists the transcript's ``In [n]:`` cells (:class:`Cell`: the code verbatim, and
what PyTorch 2.13 shows for it). :func:`replay` runs them in order in one namespace with
the tutorial's imports redirected to ember (``import torch`` -> ``import ember as torch``,
``import torch as t``, ``from torch.autograd import Variable as V``; the unused matplotlib
import dropped) and records for each cell what a notebook shows: everything printed, then
the ``repr`` of the cell's last expression unless it is ``None`` (a cell ending in
``x.grad`` shows ``tensor(...)``, one ending in ``a, b`` the tuple's repr). An exception
ends its cell, as in a notebook, and later cells still run.

Object addresses (``object at 0x7f...``) are replaced by ``0x...`` before comparing.

A cell's ``expect`` is one of

* a ``str``: the exact text (deterministic cells, as torch 2.13 prints them);
* :class:`Raises`: the cell must raise that exception type with exactly that message;
* a callable ``expect(draws) -> str`` (cells with random values): it recomputes, with NumPy
  in float32, the text from ember's own random draws (``draws`` replays the stream that
  ``manual_seed(0)`` starts; a callable may keep values on ``draws`` for later cells), and
  tensors are formatted by :func:`show`;
* ``None``: the cell runs but its output is not checked; :data:`SKIP`: it does not run.

A cell may also have a ``relation(ns)`` that asserts, right after the cell ran, what the
tutorial shows about the namespace (``x.grad == 2 * x``, next_functions identities, ...).

:func:`check_oracle` replays the original sources under real torch, its ``randn``/``rand``
answering ember's draws, and compares every expectation (random cells included) with what
PyTorch itself prints; it is skipped when torch is not installed.

Each ``test_seed_*.py`` lists its ``CELLS`` and gets the standard tests (every cell, the
cells against the transcript, the expectations against torch) from :func:`standard_tests`;
it keeps only what is particular to its seed (e.g. :func:`check_pinned` with the values
the transcript itself drew).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

# The tutorials' imports, redirected to ember.
IMPORT_SUBSTITUTIONS = [
    (re.compile(r"^import torch$", re.M), "import ember as torch"),
    (re.compile(r"^import torch as (\w+)$", re.M), r"import ember as \1"),
    (re.compile(r"^from torch\.autograd import", re.M), "from ember.autograd import"),
    (re.compile(r"^import matplotlib\.pyplot as plt\n?", re.M), ""),
]
_MATPLOTLIB = IMPORT_SUBSTITUTIONS[-1]

_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")


class _Skip:
    def __repr__(self) -> str:
        return "SKIP"


SKIP = _Skip()


@dataclass(frozen=True)
class Raises:
    """The cell must raise ``exc`` whose ``str()`` is exactly ``message``."""

    exc: type[BaseException]
    message: str
    output: str = ""  # what the cell prints before raising


@dataclass
class Cell:
    """One ``In [n]:`` cell: its verbatim source and what it must show."""

    n: int
    source: str
    expect: str | Raises | Callable | _Skip | None
    relation: Callable[[dict], None] | None = None

    def __post_init__(self) -> None:
        # Sources and texts are written as triple-quoted blocks starting with a newline.
        self.source = self.source.strip("\n")
        if isinstance(self.expect, str):
            self.expect = self.expect.removeprefix("\n")


@dataclass
class Outcome:
    """What one cell showed (``output``) or raised (``error``), and what it should have."""

    cell: Cell
    expected: str | Raises | _Skip | None
    output: str = ""
    error: BaseException | None = None
    relation_error: BaseException | None = None


def to_ember(source: str) -> str:
    """The cell's source with the tutorial's torch imports pointing at ember."""
    for pattern, repl in IMPORT_SUBSTITUTIONS:
        source = pattern.sub(repl, source)
    return source


def normalize(text: str) -> str:
    """Replace object addresses, which differ on every run."""
    return _ADDRESS.sub("0x...", text)


def run_cell(source: str, ns: dict) -> tuple[str, BaseException | None]:
    """Run ``source`` in ``ns`` as a notebook cell; return (shown text, exception or None)."""
    tree = ast.parse(source, mode="exec")
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    buf = io.StringIO()
    error = None
    with contextlib.redirect_stdout(buf), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. torch's "non-leaf .grad" UserWarning
        try:
            exec(compile(tree, "<cell>", "exec"), ns)
            if last is not None:
                value = eval(compile(last, "<cell>", "eval"), ns)
                if value is not None:
                    print(repr(value))
        except Exception as e:  # noqa: BLE001 - a notebook shows the error and goes on
            error = e
    return buf.getvalue(), error


class Draws:
    """ember's random stream from ``manual_seed(seed)``, replayed on a private generator.

    ``draws.randn(3)`` returns (as a float32 NumPy array) exactly what the cell's
    ``torch.randn(3)`` got from the global generator, when both are called in the same order.
    """

    def __init__(self, seed: int = 0) -> None:
        import ember

        self._ember = ember
        self._gen = ember.Generator().manual_seed(seed)

    def _draw(self, fn, size, kwargs):
        kwargs.pop("requires_grad", None)
        if "size" in kwargs:
            size = (tuple(kwargs.pop("size")),)
        return np.asarray(fn(*size, generator=self._gen, **kwargs).numpy())

    def randn(self, *size, **kwargs) -> np.ndarray:
        return self._draw(self._ember.randn, size, kwargs)

    def rand(self, *size, **kwargs) -> np.ndarray:
        return self._draw(self._ember.rand, size, kwargs)


def expectations(cells: list[Cell], seed: int = 0) -> dict[int, str | Raises | _Skip | None]:
    """Each cell's expected text, random cells computed from ember's draws (in cell order)."""
    draws = Draws(seed)
    out = {}
    for cell in cells:
        e = cell.expect
        out[cell.n] = e(draws) if callable(e) and not isinstance(e, (Raises, _Skip)) else e
    return out


def replay(cells: list[Cell], seed: int = 0) -> dict[int, Outcome]:
    """Run ``cells`` under ember after ``manual_seed(seed)``; map cell number -> Outcome."""
    import ember

    expected = expectations(cells, seed)
    ember.manual_seed(seed)
    ns: dict = {"__name__": "__seed__"}
    outcomes: dict[int, Outcome] = {}
    for cell in cells:
        outcome = outcomes[cell.n] = Outcome(cell, expected[cell.n])
        if cell.expect is SKIP:
            continue
        outcome.output, outcome.error = run_cell(to_ember(cell.source), ns)
        if cell.relation is not None and outcome.error is None:
            try:
                cell.relation(ns)
            except Exception as e:  # noqa: BLE001 - reported by the cell's own test
                outcome.relation_error = e
    return outcomes


def check(outcome: Outcome) -> None:
    """Assert that one replayed cell showed (or raised) what it should."""
    cell = outcome.cell
    expected = outcome.expected
    where = f"In [{cell.n}]:\n{cell.source}\n"
    if expected is SKIP:
        return
    if isinstance(expected, Raises):
        shown = (
            f"raised {type(outcome.error).__name__}: {outcome.error}"
            if outcome.error is not None
            else f"showed:\n{outcome.output}"
        )
        ok = (
            type(outcome.error) is expected.exc
            and str(outcome.error) == expected.message
            and normalize(outcome.output) == normalize(expected.output)
        )
        assert ok, f"{where}should raise {expected.exc.__name__}: {expected.message}\n{shown}"
        return
    if outcome.error is not None:
        should = "" if expected is None else f"\nexpected:\n{expected}"
        raise AssertionError(
            f"{where}raised {type(outcome.error).__name__}: {outcome.error}{should}"
        ) from outcome.error
    if expected is not None:
        assert normalize(outcome.output) == normalize(expected), (
            f"{where}expected:\n{expected}\nactual:\n{outcome.output}"
        )
    if outcome.relation_error is not None:
        raise AssertionError(
            f"{where}showed the right text but broke the tutorial's relation: "
            f"{outcome.relation_error!r}"
        ) from outcome.relation_error


def cell_params(cells: list[Cell], xfail: dict[int, str] | None = None) -> list:
    """pytest params, one per cell that runs, id ``In[n]``; ``xfail`` maps n -> reason."""
    xfail = xfail or {}
    return [
        pytest.param(
            c.n,
            id=f"In[{c.n}]",
            marks=[pytest.mark.xfail(strict=True, reason=xfail[c.n])] if c.n in xfail else [],
        )
        for c in cells
        if c.expect is not SKIP
    ]


def standard_tests(
    cells: list[Cell], transcript: str, xfail: dict[int, str] | None = None, seed: int = 0
) -> dict[str, Callable]:
    """The tests every seed file runs, for its module namespace
    (``globals().update(standard_tests(CELLS, TRANSCRIPT, XFAIL))``):

    * ``outcomes``: a module fixture, the cells replayed once under ember;
    * ``test_cell[In[n]]``: each cell that runs shows what it should (``xfail``: n -> reason);
    * ``test_cells_are_the_transcripts``: the cells are the transcript's, verbatim;
    * ``test_expectations_are_what_torch_prints``: every expectation is torch's own output.
    """

    @pytest.fixture(scope="module")
    def outcomes():
        return replay(cells, seed)

    @pytest.mark.parametrize("n", cell_params(cells, xfail))
    def test_cell(outcomes, n):
        check(outcomes[n])

    def test_cells_are_the_transcripts():
        check_sources(cells, transcript)

    def test_expectations_are_what_torch_prints():
        check_oracle(cells, seed)

    return {
        "outcomes": outcomes,
        "test_cell": test_cell,
        "test_cells_are_the_transcripts": test_cells_are_the_transcripts,
        "test_expectations_are_what_torch_prints": test_expectations_are_what_torch_prints,
    }


def check_pinned(cells: list[Cell], expect: dict[int, str | None], **draws) -> None:
    """Replay ``import torch`` and the cells numbered in ``expect`` (each with that expected
    text, or ``None``: runs, unchecked) with ember's ``randn``/``rand`` answering ``draws``
    (see :func:`pinned_draws`), e.g. a transcript's own values; check every one."""
    sources = {c.n: c.source for c in cells}
    with pinned_draws(**draws):
        outcomes = replay(
            [Cell(1, "import torch", None)] + [Cell(n, sources[n], e) for n, e in expect.items()]
        )
    for outcome in outcomes.values():
        check(outcome)


# -- helpers for the expectations and relations of random cells ------------------------


def show(values, grad_fn: str | None = None, requires_grad: bool = False) -> str:
    """ember's repr of a plain tensor holding ``values`` (float32), plus the autograd suffix
    that torch prints for a tensor with that ``grad_fn`` (or ``requires_grad=True``)."""
    import ember

    text = repr(ember.tensor(np.asarray(values, dtype=np.float32)))
    if grad_fn is not None:
        text = f"{text[:-1]}, grad_fn=<{grad_fn}>)"
    elif requires_grad:
        text = f"{text[:-1]}, requires_grad=True)"
    return text


def norm(values) -> np.float32:
    """The 2-norm in float32, as ``Tensor.norm()`` computes it."""
    v = np.asarray(values, dtype=np.float32).ravel()
    return np.float32(np.sqrt(np.dot(v, v)))


def doublings(x) -> int:
    """k such that the tutorials' ``y = x * 2`` then ``while y.norm() < 1000: y = y * 2``
    ends with ``y == x * 2**k``."""
    k, y = 1, np.asarray(x, dtype=np.float32) * np.float32(2)
    while norm(y) < 1000:
        k, y = k + 1, y * np.float32(2)
    return k


def vjp(v, x: str = "x") -> tuple[Callable, Callable]:
    """The expectation and relation of the tutorials' vector-Jacobian product cell: after
    ``y = x * 2**k`` (see :func:`doublings`; the earlier cell leaves ``k`` on ``draws``) and
    ``y.backward(v)``, ``x.grad`` (``x`` names it in the namespace) is ``2**k * v``."""
    v = np.asarray(v, dtype=np.float32)

    def expect(d) -> str:
        return show(2.0**d.k * v) + "\n"

    def relation(ns) -> None:
        # The vector-Jacobian product of y = x * 2**k with v is 2**k * v, whatever x was.
        t = ns[x]
        assert np.array_equal(array(t.grad), np.float32(2.0 ** doublings(array(t))) * v)

    return expect, relation


def array(t) -> np.ndarray:
    """A tensor's values as a NumPy array (ember's or torch's tensor)."""
    return np.asarray(t.detach().numpy())


def grad_fn_name(t) -> str | None:
    return None if t.grad_fn is None else type(t.grad_fn).__name__


# -- the transcripts themselves and the torch oracle -----------------------------------


def seeds_dir() -> Path | None:
    """The seed transcripts: ``$EMBER_SEEDS``, a ``shared/seeds`` above here, or the copy in
    tests/data/seeds."""
    here = Path(__file__).resolve()
    candidates = [os.environ.get("EMBER_SEEDS", "")]
    candidates += [str(p / "shared" / "seeds") for p in here.parents]
    # A copy of the transcripts travels with the tests, so a lone clone checks them too.
    candidates.append(str(here.parent.parent / "data" / "seeds"))
    for c in candidates:
        if c and Path(c, "README.md").is_file():
            return Path(c)
    return None


def _rstrip_lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.split("\n"))


def check_sources(cells: list[Cell], transcript: str) -> None:
    """Assert the cells are the transcript's, verbatim (up to trailing spaces), all of them."""
    root = seeds_dir()
    if root is None:
        pytest.skip("the seed transcripts (shared/seeds) are not beside this checkout")
    text = _rstrip_lines((root / transcript).read_text(encoding="utf-8"))
    numbers = [int(n) for n in re.findall(r"^In \[(\d+)\]:$", text, re.M)]
    assert [c.n for c in cells] == numbers
    for c in cells:
        assert f"In [{c.n}]:\n{_rstrip_lines(c.source)}\n\n" in text, f"In [{c.n}] differs"


def replay_oracle(cells: list[Cell], seed: int = 0) -> dict[int, tuple]:
    """Run the cells' original sources under real torch, its ``randn``/``rand`` answering
    ember's draws (so random cells compute from the same numbers); map cell number ->
    (shown text, exception or None, the relation's exception or None)."""
    import torch

    draws = Draws(seed)
    originals = torch.randn, torch.rand

    def patched(name):
        def draw(*size, requires_grad=False, dtype=None, **kwargs):
            values = getattr(draws, name)(*size, **kwargs)
            t = torch.from_numpy(values.copy())
            if dtype is not None:
                t = t.to(dtype)
            return t.requires_grad_(requires_grad)

        return draw

    ns: dict = {"__name__": "__seed__"}
    results = {}
    try:
        torch.randn, torch.rand = patched("randn"), patched("rand")
        for cell in cells:
            if cell.expect is SKIP:
                continue
            out, err = run_cell(_MATPLOTLIB[0].sub("", cell.source), ns)
            broken = None
            if cell.relation is not None and err is None:
                try:
                    cell.relation(ns)
                except Exception as e:  # noqa: BLE001 - reported by check_oracle
                    broken = e
            results[cell.n] = out, err, broken
    finally:
        torch.randn, torch.rand = originals
    return results


def check_oracle(cells: list[Cell], seed: int = 0) -> None:
    """Assert every cell's expectation is what PyTorch prints for it (same random draws)."""
    pytest.importorskip("torch")
    expected = expectations(cells, seed)
    actual = replay_oracle(cells, seed)
    wrong = []
    for cell in cells:
        exp = expected[cell.n]
        if exp is SKIP:
            continue
        out, err, broken = actual[cell.n]
        if broken is not None:
            wrong.append(f"In [{cell.n}]: torch breaks the relation: {broken!r}")
        if exp is None:
            continue
        if isinstance(exp, Raises):
            ok = (
                type(err) is exp.exc
                and str(err) == exp.message
                and normalize(out) == normalize(exp.output)
            )
        else:
            ok = err is None and normalize(out) == normalize(exp)
        if not ok:
            got = f"{type(err).__name__}: {err}" if err is not None else out
            wrong.append(f"In [{cell.n}]: expected\n{exp}\ntorch shows\n{got}")
    assert not wrong, "\n".join(wrong)


@contextlib.contextmanager
def pinned_draws(**values):
    """Make ember's ``randn``/``rand`` return the given arrays (in order), e.g. the values a
    transcript drew, so its printed numbers can be asserted literally."""
    import ember

    queues = {name: list(v) for name, v in values.items()}
    originals = {name: getattr(ember, name) for name in queues}

    def pinned(name):
        def draw(*size, requires_grad=False, **kwargs):
            return ember.tensor(
                np.asarray(queues[name].pop(0), dtype=np.float32), requires_grad=requires_grad
            )

        return draw

    try:
        for name in queues:
            setattr(ember, name, pinned(name))
        yield
    finally:
        for name, fn in originals.items():
            setattr(ember, name, fn)
