"""ember.profiler and ember.autograd.profiler: torch's profiler API, tables and traces."""

from __future__ import annotations

import json

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
