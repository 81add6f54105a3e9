"""examples/charlm.py trains, plots, samples and writes its summary in a short run."""

import json
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "charlm.py"


def test_charlm_short_run(tmp_path):
    cmd = [sys.executable, str(EXAMPLE), "--steps", "30", "--eval-every", "10"]
    cmd += ["--batch-size", "16", "--seq-len", "32", "--sample-len", "120"]
    cmd += ["--seed", "1", "--no-progress", "--device", "cpu", "--out-dir", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    out = proc.stdout
    assert "step   30" in out and "unigram baseline" in out
    sample = out.split("--- sample (temperature 0.8) ---\n")[1].split("\n--- end of sample ---")[0]
    assert sample.startswith("def ") and len(sample) == 4 + 120

    assert (tmp_path / "loss_curve.svg").read_text().startswith("<svg ")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["steps"] == 30 and summary["sample"] == sample
    curve = summary["val_curve"]
    assert list(curve) == ["0", "10", "20", "30"]
    assert curve["30"] < curve["0"] - 0.5  # starts near log(vocab), learns quickly
    assert summary["final_val_loss"] == curve["30"]
    assert 2.0 < summary["unigram_baseline"] < 4.0
    assert summary["corpus"]["chars"] == 150_000
    assert summary["wall_seconds"] > 0


def test_charlm_rejects_non_cpu_device():
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), "--device", "cuda", "--steps", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "invalid choice" in proc.stderr
