"""ember.profiler and ember.autograd.profiler: torch's profiler API, tables and traces."""

from __future__ import annotations

import json
import threading

import pytest

import ember as torch
import ember.profiler  # noqa: F401
from ember.autograd import profiler as legacy
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _seed_001():
    x = torch.ones(2, 2, requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True) as p:
        with record_function("model"):
            y = x + 2
            z = y * y * 3
            out = z.mean()
        out.backward()
    return p


def test_forward_ops_and_backward_nodes_are_recorded():
    p = _seed_001()
    counts = {e.key: e.count for e in p.key_averages()}
    assert counts["aten::add"] == 1 and counts["aten::mul"] == 2 and counts["aten::mean"] == 1
    assert counts["model"] == 1
    assert counts["MulBackward0"] == 2
    assert counts["autograd::engine::evaluate_function: MeanBackward0"] == 1
    assert counts["torch::autograd::AccumulateGrad"] == 1
    evs = {e.name: e for e in p.events()}
    assert evs["aten::add"].cpu_parent is evs["model"]
    assert evs["aten::add"].input_shapes == [[2, 2], []]
    assert evs["aten::add"].cpu_memory_usage == 16  # 4 float32 values returned


def _microseconds(text: str) -> float:
    for unit, scale in (("us", 1.0), ("ms", 1e3), ("s", 1e6)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise AssertionError(text)


def test_table_layout():
    table = _seed_001().key_averages().table(sort_by="cpu_time_total", row_limit=3)
    lines = table.splitlines()
    names = [
        "Name",
        "Self CPU %",
        "Self CPU",
        "CPU total %",
        "CPU total",
        "CPU time avg",
        "CPU Mem",
        "Self CPU Mem",
        "# of Calls",
        "Input Shapes",
    ]
    widths = [55] + [12] * 8 + [len("[[2, 2], [2, 2]]") + 4]
    assert lines[0] == "".join("-" * w + "  " for w in widths)
    assert lines[1] == "".join(n.rjust(w) + "  " for n, w in zip(names, widths))
    assert lines[2] == lines[0] and lines[6] == lines[0]
    assert len(lines) == 8 and lines[7].startswith("Self CPU time total: ")
    # Rows sorted by CPU total (the forward's "model" range usually first, but a backward
    # node descheduled on a loaded machine can take longer: it runs outside the range).
    totals = [_microseconds(line[55 + 2 + 3 * 14 :].split()[0]) for line in lines[3:6]]
    assert totals == sorted(totals, reverse=True), totals
    assert lines[3].split()[2] == "100.00%" or lines[3].split()[3].endswith("%")


def test_group_by_input_shape():
    x = torch.ones(2, 2)
    with profile(record_shapes=True) as p:
        x * 2
        x * x
        torch.ones(3) * 2
    rows = {(e.key, str(e.input_shapes)): e.count for e in p.key_averages(True)}
    assert rows[("aten::mul", "[[2, 2], []]")] == 1
    assert rows[("aten::mul", "[[2, 2], [2, 2]]")] == 1
    assert rows[("aten::mul", "[[3], []]")] == 1
    assert {e.key: e.count for e in p.key_averages()}["aten::mul"] == 3


def test_chrome_trace(tmp_path):
    p = _seed_001()
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())["traceEvents"]
    assert len(trace) == len(p.events())
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace)
    assert {e["name"] for e in trace} >= {"aten::mul", "MulBackward0", "model"}


def test_schedule_and_steps():
    s = schedule(wait=1, warmup=1, active=2, repeat=1)
    assert [s(i) for i in range(5)] == [
        ProfilerAction.NONE,
        ProfilerAction.WARMUP,
        ProfilerAction.RECORD,
        ProfilerAction.RECORD_AND_SAVE,
        ProfilerAction.NONE,
    ]
    x = torch.ones(3, requires_grad=True)
    ready = []
    with profile(schedule=s, on_trace_ready=lambda p: ready.append(p.key_averages())) as prof:
        for _ in range(6):
            (x * 2).sum().backward()
            prof.step()
    [avg] = ready
    counts = {e.key: e.count for e in avg}
    assert counts["aten::mul"] == 2  # the two active steps only
    assert counts["ProfilerStep#2"] == 1 and counts["ProfilerStep#3"] == 1


def test_legacy_profiler_and_nothing_left_installed():
    mul = torch.Tensor.__mul__
    lin = torch.nn.Linear(3, 2)
    with legacy.profile() as p:
        lin(torch.ones(2, 3)).sum().backward()
    assert torch.Tensor.__mul__ is mul
    names = {e.name for e in p.function_events}
    assert {"aten::linear", "aten::sum", "AddmmBackward0", "SumBackward0"} <= names
    assert "Self CPU time total" in p.table()
    with record_function("outside"):  # no profiler: a no-op
        pass


# -- the profiler as a TorchFunctionMode ------------------------------------------------------


def _public_attributes() -> dict:
    """Every public attribute (and dunder) of the namespaces the profiler times."""
    import ember.nn.functional as F

    owners = {
        "ember": torch,
        "Tensor": torch.Tensor,
        "nn.functional": F,
        "linalg": torch.linalg,
        "special": torch.special,
        "fft": torch.fft,
    }
    found = {}
    for owner_name, owner in owners.items():
        for name, value in list(vars(owner).items()):
            if not name.startswith("_") or (name.startswith("__") and name.endswith("__")):
                found[owner_name, name] = value
    return found


def _changes(before: dict, after: dict) -> list:
    return sorted(
        f"{owner}.{name}"
        for owner, name in before.keys() | after.keys()
        if before.get((owner, name), ...) is not after.get((owner, name), ...)
    )


def test_no_public_attribute_changes_while_profiling():
    """Profiling replaces nothing: ember's, Tensor's and nn.functional's attributes are the
    same objects before, during and after a profile (both profilers)."""
    x = torch.ones(3, 3, requires_grad=True)

    def work():
        y = torch.nn.functional.relu(x @ x) * 2 + torch.linalg.norm(x) + torch.special.expit(x)
        y.sum().backward()
        x.grad = None

    work()  # anything made on first use is made now
    before = _public_attributes()
    for make in (profile, legacy.profile):
        with make() as p:
            work()
            during = _public_attributes()
        assert _changes(before, during) == []
        assert _changes(before, _public_attributes()) == []
        names = {e.name for e in (p.events() if make is profile else p.function_events)}
        assert {"aten::relu", "aten::matmul", "aten::linalg_norm", "MulBackward0"} <= names
    assert torch.overrides._get_current_function_mode_stack() == []


def test_a_profiler_records_its_own_thread_only():
    """As torch's: another thread's ops and backward passes are not in the profile."""
    go, done = threading.Event(), threading.Event()

    def other():
        go.wait()
        w = torch.ones(3, requires_grad=True)
        for _ in range(5):
            torch.sin(w).sum().backward()
        done.set()

    thread = threading.Thread(target=other)
    thread.start()
    with profile() as p:
        torch.cos(torch.ones(2))
        go.set()
        done.wait(30)
    thread.join()
    names = {e.name for e in p.events()}
    assert "aten::cos" in names
    assert not names & {"aten::sin", "aten::sum", "SinBackward0"}


def test_profilers_in_two_threads_at_once():
    barrier = threading.Barrier(2)
    results = {}

    def run(tag, op):
        x = torch.ones(4, requires_grad=True)
        with profile() as p:
            barrier.wait()
            for _ in range(20):
                op(x).sum().backward()
            barrier.wait()
        results[tag] = {e.name for e in p.events()}

    threads = [
        threading.Thread(target=run, args=("exp", torch.exp)),
        threading.Thread(target=run, args=("tanh", torch.tanh)),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert "aten::exp" in results["exp"] and "ExpBackward0" in results["exp"]
    assert "aten::tanh" in results["tanh"] and "TanhBackward0" in results["tanh"]
    assert not results["exp"] & {"aten::tanh", "TanhBackward0"}
    assert not results["tanh"] & {"aten::exp", "ExpBackward0"}


def test_one_profiler_per_thread():
    with profile():
        with pytest.raises(RuntimeError, match="already enabled on this thread"):
            with legacy.profile():
                pass


def test_nested_ops_and_ops_in_backward_are_children():
    lin = torch.nn.Linear(3, 2)
    x = torch.ones(4, 3, requires_grad=True)
    with profile() as p:
        y = lin(x).sum()
        (g,) = torch.autograd.grad(y * y, x, create_graph=True)
    evs = p.events()
    t = next(e for e in evs if e.name == "aten::t")
    assert t.cpu_parent is not None and t.cpu_parent.name == "aten::linear"
    inside = [e.cpu_parent.name for e in evs if e.name == "aten::mul" and e.cpu_parent]
    assert "MulBackward0" in inside  # the recorded backward's own multiplication


def test_ops_namespace_calls_and_indexing_are_named_as_torch():
    x = torch.ones(2, 3)
    with profile() as p:
        torch.ops.aten.mul.Tensor(x, x)
        torch.ops.aten.add(x, 1)
        x[0]
        x[:, 1:]
        x[torch.tensor([0, 1])]
        _ = x.T
        x.size()
    names = [e.name for e in p.events()]
    for expected in ("aten::mul", "aten::add", "aten::select", "aten::slice", "aten::index"):
        assert expected in names
    assert "aten::numpy_T" in names and "aten::size" not in names


def test_user_modes_and_the_profiler():
    """A mode entered inside a profile sees the calls and the ops are still timed; when the
    profiler stops under it (a schedule's step), only the profiler's mode leaves."""

    class Count(torch.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.n = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if not str(func).startswith("profiler."):  # (steps' record_function ranges)
                self.n += 1
            return func(*args, **(kwargs or {}))

    with profile() as p, Count() as c:
        torch.ones(2) * 2
    assert c.n == 2 and [e.name for e in p.events()] == ["aten::ones", "aten::mul"]

    prof = profile(schedule=schedule(wait=0, warmup=0, active=1, repeat=1))
    prof.start()
    mode = Count().__enter__()
    torch.ones(2) * 2
    prof.step()  # recording ends while the user's mode is on top
    torch.ones(2) * 3
    mode.__exit__(None, None, None)
    prof.stop()
    assert torch.overrides._get_current_function_mode_stack() == []
    names = [e.name for e in prof.events()]
    assert mode.n == 4 and names == ["ProfilerStep#0", "aten::ones", "aten::mul"]
