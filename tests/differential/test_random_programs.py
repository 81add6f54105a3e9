"""Random programs over the op database (``differential/programs.py``), ember vs torch.

Each program is a seeded chain of 2-5 opdb entries; ember and torch run it and must agree on
the values, dtypes and ``grad_fn`` names of every step, the reverse-mode gradients of a random
weighted sum of the final outputs, the Hessian-vector products (when every op has double
backward) and the forward-mode tangents (when every op has forward mode). Inputs read from
earlier steps are often written in place through views first (``programs.Write``), so these
checks go through ``CopySlices``; the summary counts such programs. No warning may
escape ember. Programs whose torch reference is ill-defined (errors, blow-ups, kinks, ties or
jumps within reach of the point) are drawn again; when every attempt is, the program is
skipped as ill-defined (never because of ember's results).

Size: ``--fuzz-programs N`` or ``EMBER_FUZZ_PROGRAMS=N`` (default 60); each program is a test,
``p00017`` reproduces with ``cd tests && ../.venv/bin/python -m differential.programs 17``.
A summary line (programs compared, skipped, per-check counts) ends the run.
"""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from differential import programs as P

DEFAULT_PROGRAMS = 60

STATS: Counter = Counter()
OPS_SEEN: set = set()


def _count(config) -> int:
    n = config.getoption("fuzz_programs", default=None)
    if n is None:
        n = os.environ.get("EMBER_FUZZ_PROGRAMS") or DEFAULT_PROGRAMS
    return int(n)


def pytest_generate_tests(metafunc):
    if "program_index" in metafunc.fixturenames:
        n = _count(metafunc.config)
        metafunc.parametrize("program_index", range(n), ids=[f"p{i:05d}" for i in range(n)])


def _category(reason: str) -> str:
    for key, name in (
        ("kink", "near a kink/tie/jump"),
        ("unstable", "near a kink/tie/jump"),
        ("blown up", "blow-up"),
        ("not finite", "non-finite"),
        ("torch raised", "torch error"),
        ("forward mode is not the derivative", "torch forward mode != central differences"),
        ("not the derivative", "torch derivative != central differences"),
    ):
        if key in reason:
            return name
    return "other"


def summary() -> str:
    s = STATS
    checks = ", ".join(
        f"{c} {s[c + ' passed']}/{s[c + ' passed'] + s[c + ' failed']}" for c in P.CHECKS
    )
    reasons = ", ".join(f"{k[len('rejected: ') :]} {v}" for k, v in s.items() if "rejected: " in k)
    return (
        f"ember differential programs: {s['drawn']} drawn, {s['compared']} compared, "
        f"{s['ill-defined']} skipped as ill-defined, {s['failed']} failed; "
        f"checks passed: {checks}; "
        f"{len(OPS_SEEN)}/{len(P.OPS)} opdb entries exercised; "
        f"{s['writes views']} programs write in place through views "
        f"({s['writes views double']} with double backward, "
        f"{s['writes views forward']} with forward mode, {s['reads early views']} reading the "
        "written tensor through a view taken before the write); "
        f"{s['redraws']} redraws ({reasons or 'none'}); {s['seconds']:.1f} s"
    )


class _Summary:
    def pytest_terminal_summary(self, terminalreporter):
        if STATS["drawn"]:
            terminalreporter.write_sep("-", "differential")
            terminalreporter.write_line(summary())


@pytest.fixture(scope="module", autouse=True)
def _print_summary(request):
    manager = request.config.pluginmanager
    if not manager.has_plugin("ember-differential-summary"):
        manager.register(_Summary(), "ember-differential-summary")
    yield


def test_random_program(program_index):
    start = time.perf_counter()
    try:
        prog = P.draw(program_index)
        STATS["drawn"] += 1
        STATS["redraws"] += len(prog.rejected) - (0 if prog.ok else 1)
        for reason in prog.rejected:
            STATS["rejected: " + _category(reason)] += 1
        if not prog.ok:
            STATS["ill-defined"] += 1
            pytest.skip(f"torch's reference is ill-defined at every attempt ({prog.rejected[-1]})")
        OPS_SEEN.update(prog.op_names)
        fails = P.compare(prog, P.evaluate_ember(prog))
    finally:
        STATS["seconds"] += time.perf_counter() - start
    STATS["compared"] += 1
    if prog.writes_views:
        STATS["writes views"] += 1
        STATS["writes views double"] += "double" in fails
        STATS["writes views forward"] += "forward" in fails
        STATS["reads early views"] += prog.reads_stale_views
    for check, items in fails.items():
        STATS[f"{check} {'failed' if items else 'passed'}"] += 1
    if any(fails.values()):
        STATS["failed"] += 1
    if any(fails.values()):
        pytest.fail("ember differs from torch:\n" + P.report(prog, fails), pytrace=False)
