"""examples/digits.py (the demo's main job) trains, checkpoints and plots in a short run."""

import importlib.util
import json
import sys
from pathlib import Path

import ember

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits.py"


def _load_example():
    if str(EXAMPLE.parent) not in sys.path:  # as when run as a script: its folder first
        sys.path.insert(0, str(EXAMPLE.parent))  # (it imports examples/_common.py)
    spec = importlib.util.spec_from_file_location("ember_digits_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_short_run_learns_and_writes_artifacts(tmp_path, capsys):
    digits = _load_example()
    summary = digits.main(
        ["--epochs", "2", "--no-progress", "--seed", "1", "--out-dir", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert "epoch  2/2" in out and "final test accuracy" in out
    assert summary["test_accuracy"] > 0.6  # chance is 0.1
    ckpt, svg = tmp_path / "digits_cnn.safetensors", tmp_path / "digits_curves.svg"
    assert ckpt.stat().st_size > 0
    assert svg.read_text().startswith("<svg ")
    assert json.loads((tmp_path / "summary.json").read_text())["epochs"] == 2
    state = ember.load(ckpt)
    assert list(state) == list(digits.build_model().state_dict())


def test_digits_cli_options():
    args = _load_example().parse_args(["--batch-size", "16", "--lr", "0.01"])
    assert (args.epochs, args.batch_size, args.lr, args.seed) == (30, 16, 0.01, 0)
    assert not args.no_progress
