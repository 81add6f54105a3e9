"""ember.utils.tensorboard.SummaryWriter, read back with TensorBoard's own readers.

The strongest check writes the same calls with torch's ``SummaryWriter`` and ember's to two
directories and compares the events read back, proto for proto (scalars, histogram buckets,
PNG bytes of images, text, hparams, PR curves, layouts, sound, meshes, embedding files).
The graph has no torch twin (torch traces with TorchScript): its nodes, ops, edges and
shapes are checked, and its module scopes against torch's.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
import wave
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the oracle; `make test` installs it (and requires it)
pytest.importorskip("tensorboard")  # the `tensorboard` extra, which `make test` installs

from PIL import Image  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.backend.event_processing.event_file_loader import (  # noqa: E402
    LegacyEventFileLoader,
)
from tensorboard.compat.proto import types_pb2  # noqa: E402
from tensorboard.compat.proto.graph_pb2 import GraphDef  # noqa: E402
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData  # noqa: E402
from tensorboard.util.tensor_util import make_ndarray  # noqa: E402
from torch.utils.tensorboard import SummaryWriter as TorchWriter  # noqa: E402

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
from ember.utils.tensorboard import SummaryWriter  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MESSAGE = (
    "TensorBoard logging requires TensorBoard version 1.15 or above "
    "(install ember's tensorboard extra: pip install -e '.[tensorboard]' in ember's checkout)"
)
ALL = {k: 0 for k in ("scalars", "histograms", "images", "tensors", "audio", "distributions")}


def _accumulator(path) -> EventAccumulator:
    acc = EventAccumulator(str(path), size_guidance=ALL)
    acc.Reload()
    return acc


def _events(path) -> list:
    """The events of the event files directly in ``path`` (oldest file first), without
    each file's ``file_version`` header."""
    out = []
    for f in sorted(Path(path).glob("events.out.tfevents.*")):
        out += [e for e in LegacyEventFileLoader(str(f)).Load() if not e.HasField("file_version")]
    return out


def _summaries(path) -> list:
    return [(e.step, e.wall_time, v) for e in _events(path) for v in e.summary.value]


def _png(encoded: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(encoded)))


def _write_both(tmp_path, calls):
    """Run ``calls(writer, lib)`` with torch's writer (lib=torch) and ember's (lib=ember);
    the two directories written."""
    dirs = tmp_path / "torch", tmp_path / "ember"
    for lib, cls, d in ((torch, TorchWriter, dirs[0]), (ember, SummaryWriter, dirs[1])):
        with cls(str(d)) as w:
            calls(w, lib)
    return dirs


# -- proto for proto against torch ---------------------------------------------------------------

RNG = np.random.default_rng(0)
NORMAL = RNG.normal(size=1000).astype(np.float32)
SPREAD = (RNG.exponential(size=300) * 1e4).astype(np.float64)
INTS = RNG.integers(-3, 7, size=200)
IMG_CHW = RNG.random((3, 6, 10)).astype(np.float32)
IMG_GRAY = RNG.random((1, 5, 4)).astype(np.float32)
IMG_U8 = RNG.integers(0, 256, size=(7, 5, 3)).astype(np.uint8)
BATCH = RNG.random((10, 3, 4, 5)).astype(np.float32)
LABELS = RNG.integers(0, 2, size=60)
PREDS = RNG.random(60).astype(np.float32)


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1.5), dpi=30)
    plt.plot([0, 1, 3, 2])
    return fig


CASES = {
    "scalar_tensor": lambda w, T: w.add_scalar("a/b", T.tensor(0.25), 3, walltime=10.5),
    "scalar_python": lambda w, T: [
        w.add_scalar("x", v, i, walltime=11.0 + i)
        for i, v in enumerate([1, 2.5, -3e-8, float("inf")])
    ],
    "scalar_numpy": lambda w, T: w.add_scalar("n", np.float64(1 / 3), 1, walltime=1.0),
    "scalar_new_style": lambda w, T: w.add_scalar("s", 1 / 3, 2, walltime=2.0, new_style=True),
    "scalar_double": lambda w, T: w.add_scalar(
        "d",
        T.tensor(1 / 3, dtype=T.float64),
        2,
        walltime=2.0,
        new_style=True,
        double_precision=True,
    ),
    "histogram_tensorflow": lambda w, T: w.add_histogram("h", T.tensor(NORMAL), 0, walltime=1.0),
    "histogram_spread": lambda w, T: w.add_histogram("h", SPREAD, 1, walltime=1.0),
    "histogram_ints": lambda w, T: w.add_histogram("h", T.tensor(INTS), 2, walltime=1.0),
    "histogram_auto": lambda w, T: w.add_histogram("h", NORMAL, 3, bins="auto", walltime=1.0),
    "histogram_fd_max_bins": lambda w, T: w.add_histogram(
        "h", T.tensor(NORMAL), 4, bins="fd", max_bins=7, walltime=1.0
    ),
    "histogram_tf_max_bins": lambda w, T: w.add_histogram(
        "h", NORMAL, 4, max_bins=20, walltime=1.0
    ),
    "histogram_count": lambda w, T: w.add_histogram("h", T.tensor([3.5, 3.5]), 5, bins=4),
    "histogram_raw": lambda w, T: w.add_histogram_raw(
        "r", 0.0, 3.0, 6, 9.0, 19.0, [1.0, 2.0, 3.0], [1, 2, 3], global_step=1, walltime=3.0
    ),
    "image_chw": lambda w, T: w.add_image("i", T.tensor(IMG_CHW), 0, walltime=1.0),
    "image_hwc": lambda w, T: w.add_image(
        "i", T.tensor(IMG_CHW).permute(1, 2, 0), 0, walltime=1.0, dataformats="HWC"
    ),
    "image_hw": lambda w, T: w.add_image(
        "i", IMG_CHW[0] * 2 - 0.5, 0, walltime=1.0, dataformats="HW"
    ),
    "image_gray": lambda w, T: w.add_image("i", T.tensor(IMG_GRAY), 0, walltime=1.0),
    "image_uint8": lambda w, T: w.add_image(
        "i", T.tensor(IMG_U8), 0, walltime=1.0, dataformats="HWC"
    ),
    "images_nchw": lambda w, T: w.add_images("b", T.tensor(BATCH), 0, walltime=1.0),
    "images_nhwc": lambda w, T: w.add_images(
        "b", BATCH.transpose(0, 2, 3, 1), 0, walltime=1.0, dataformats="NHWC"
    ),
    "image_boxes": lambda w, T: w.add_image_with_boxes(
        "bx",
        T.tensor(np.zeros((3, 30, 40), np.float32)),
        T.tensor([[2, 3, 20, 25]]),
        0,
        walltime=1.0,
        labels=["cat"],
    ),
    "figure": lambda w, T: w.add_figure("f", _figure(), 0, walltime=1.0),
    "figures": lambda w, T: w.add_figure("f", [_figure(), _figure()], 0, walltime=1.0),
    "text": lambda w, T: w.add_text("notes", "**bold** and ü", 4, walltime=1.0),
    "pr_curve": lambda w, T: w.add_pr_curve(
        "pr", T.tensor(LABELS), T.tensor(PREDS), 2, num_thresholds=10, walltime=1.0
    ),
    "pr_curve_numpy": lambda w, T: w.add_pr_curve("pr", LABELS, PREDS, 2, walltime=1.0),
    "pr_curve_raw": lambda w, T: w.add_pr_curve_raw(
        "pr",
        np.array([3, 2]),
        np.array([2, 0]),
        np.array([0, 2]),
        np.array([0, 1]),
        np.array([0.6, 1.0]),
        np.array([1.0, 0.67]),
        1,
        num_thresholds=2,
        walltime=1.0,
    ),
    "custom_scalars": lambda w, T: w.add_custom_scalars(
        {
            "A": {"lines": ["Multiline", ["a/1", "a/2"]]},
            "B": {"band": ["Margin", ["b/m", "b/lo", "b/hi"]]},
        }
    ),
    "custom_multiline": lambda w, T: w.add_custom_scalars_multilinechart(["x", "y"], "c", "t"),
    "custom_margin": lambda w, T: w.add_custom_scalars_marginchart(["m", "l", "u"]),
    "audio": lambda w, T: w.add_audio(
        "snd", T.sin(T.arange(400.0) / 7).unsqueeze(0), 1, sample_rate=8000, walltime=1.0
    ),
    "audio_clipped": lambda w, T: w.add_audio("snd", np.linspace(-2, 2, 50), 1, walltime=1.0),
    "mesh": lambda w, T: w.add_mesh(
        "tetra",
        vertices=T.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]]),
        colors=T.tensor([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 0, 255]]]),
        faces=T.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]]),
        config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}},
        global_step=2,
        walltime=1.0,
    ),
    "tensor_float": lambda w, T: w.add_tensor("t", T.tensor([[1.5, -2.0]]), 1, walltime=1.0),
    "tensor_int64": lambda w, T: w.add_tensor("t", T.tensor([1, 2, 3]), 1, walltime=1.0),
    "tensor_bool": lambda w, T: w.add_tensor("t", T.tensor([True, False]), 1, walltime=1.0),
    "tensor_double": lambda w, T: w.add_tensor("t", T.tensor([0.1], dtype=T.float64), 1),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_events_equal_torchs(tmp_path, case):
    torch_dir, ember_dir = _write_both(tmp_path, CASES[case])
    expected, got = _summaries(torch_dir), _summaries(ember_dir)
    assert expected  # torch wrote something to compare with
    if case in (
        "custom_scalars",
        "custom_multiline",
        "custom_margin",
        "tensor_double",
        "histogram_count",
    ):
        # no walltime argument: stamped with the time of writing
        expected = [(s, v) for s, _, v in expected]
        got = [(s, v) for s, _, v in got]
    assert got == expected


def test_scalars_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(5):
            w.add_scalar("loss", ember.tensor(1.0 / (step + 1)), step, walltime=100.0 + step)
        w.add_scalar("lr", 0.1, global_step=np.int64(7), new_style=True, double_precision=True)
    acc = _accumulator(tmp_path)
    loss = acc.Scalars("loss")
    assert [e.step for e in loss] == [0, 1, 2, 3, 4]
    assert [e.wall_time for e in loss] == [100.0, 101.0, 102.0, 103.0, 104.0]
    assert [e.value for e in loss] == pytest.approx([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5], rel=1e-7)
    (lr,) = acc.Tensors("lr")
    assert lr.step == 7 and make_ndarray(lr.tensor_proto).item() == 0.1  # float64 kept exactly
    assert abs(lr.wall_time - time.time()) < 60  # stamped now


def test_scalar_with_more_than_one_value_is_refused_as_torch_refuses_it(tmp_path):
    for lib, cls, d in ((torch, TorchWriter, "t"), (ember, SummaryWriter, "e")):
        with cls(str(tmp_path / d)) as w, pytest.raises(AssertionError, match="one element"):
            w.add_scalar("x", lib.ones(2))


def test_add_scalars_writes_a_run_per_line_as_torch_does(tmp_path):
    def calls(w, T):
        for step in range(3):
            values = {"train": T.tensor(1.0 - 0.1 * step), "test": 2.0 + step}
            w.add_scalars("loss/all", values, step, walltime=50.0 + step)

    torch_dir, ember_dir = _write_both(tmp_path, calls)
    subdirs = sorted(p.name for p in ember_dir.iterdir() if p.is_dir())
    assert subdirs == sorted(p.name for p in torch_dir.iterdir() if p.is_dir())
    assert subdirs == ["loss_all_test", "loss_all_train"]
    for sub in subdirs:
        assert _summaries(ember_dir / sub) == _summaries(torch_dir / sub)
    train = _accumulator(ember_dir / "loss_all_train").Scalars("loss/all")
    assert [(e.step, e.wall_time) for e in train] == [(0, 50.0), (1, 51.0), (2, 52.0)]
    assert [e.value for e in train] == pytest.approx([1.0, 0.9, 0.8])
    assert _events(ember_dir) == []  # the main run holds none of them


def test_add_scalars_keeps_its_writers(tmp_path):
    w = SummaryWriter(tmp_path)
    w.add_scalars("m", {"a": 1.0, "b": 2.0}, 0)
    w.add_scalars("m", {"a": 3.0}, 1)
    assert sorted(os.path.basename(d) for d in w.all_writers) == ["m_a", "m_b", tmp_path.name]
    w.close()
    assert [e.value for e in _accumulator(tmp_path / "m_a").Scalars("m")] == [1.0, 3.0]


def test_histogram_read_back(tmp_path):
    values = ember.tensor(NORMAL)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("w", values, 3)
        w.add_histogram("w", values * 2, 4, bins=5)
    first, second = _accumulator(tmp_path).Histograms("w")
    h = first.histogram_value
    assert first.step == 3 and h.num == 1000
    assert h.min == pytest.approx(NORMAL.min()) and h.max == pytest.approx(NORMAL.max())
    assert h.sum == pytest.approx(NORMAL.astype(float).sum())
    assert h.sum_squares == pytest.approx((NORMAL.astype(float) ** 2).sum())
    assert sum(h.bucket) == 1000 and h.bucket[0] == 0  # the empty bucket before the data
    assert len(second.histogram_value.bucket) == 6
    counts, edges = np.histogram(NORMAL * 2, bins=5)
    assert list(second.histogram_value.bucket) == [0, *counts.tolist()]
    assert list(second.histogram_value.bucket_limit) == pytest.approx(edges.tolist())


def test_histogram_raw_checks_lengths_as_torch_does(tmp_path):
    for cls, d in ((TorchWriter, "t"), (SummaryWriter, "e")):
        with cls(str(tmp_path / d)) as w, pytest.raises(ValueError, match="bucket_limits"):
            w.add_histogram_raw("r", 0, 1, 2, 1, 1, [1, 2], [2])
    with pytest.raises(ValueError, match="no element"):
        SummaryWriter(tmp_path / "e2").add_histogram("h", np.zeros(0))


def test_images_decode_to_the_pixels_given(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_image("chw", ember.tensor(IMG_CHW), 1)
        w.add_image("hw", IMG_CHW[0], 1, dataformats="HW")
        w.add_image("u8", IMG_U8, 1, dataformats="HWC")
        w.add_images("grid", BATCH, 1)
    acc = _accumulator(tmp_path)
    expected = (IMG_CHW * 255).clip(0, 255).astype(np.uint8).transpose(1, 2, 0)
    (chw,) = acc.Images("chw")
    assert (chw.height, chw.width, chw.step) == (6, 10, 1)
    assert np.array_equal(_png(chw.encoded_image_string), expected)
    gray = _png(acc.Images("hw")[0].encoded_image_string)
    assert np.array_equal(gray, np.repeat(expected[:, :, :1], 3, axis=2))
    assert np.array_equal(_png(acc.Images("u8")[0].encoded_image_string), IMG_U8)
    grid = _png(acc.Images("grid")[0].encoded_image_string)
    assert grid.shape == (2 * 4, 8 * 5, 3)  # 10 images, 8 to a row
    ninth = (BATCH[9] * 255).astype(np.uint8).transpose(1, 2, 0)
    assert np.array_equal(grid[4:8, 5:10], ninth)
    assert not grid[4:8, 10:].any()  # the unused cells are black


def test_figure_is_rendered_at_its_size(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_figure("fig", _figure(), 0)
    (im,) = _accumulator(tmp_path).Images("fig")
    assert (im.height, im.width) == (45, 60)  # 2 x 1.5 inches at 30 dpi
    assert _png(im.encoded_image_string).shape == (45, 60, 3)


def test_text_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "first", 0)
        w.add_text("notes", "second", 1)
    acc = _accumulator(tmp_path)
    assert acc.Tags()["tensors"] == ["notes/text_summary"]
    assert "notes/text_summary" in acc.PluginTagToContent("text")
    got = [
        (e.step, make_ndarray(e.tensor_proto).tolist()) for e in acc.Tensors("notes/text_summary")
    ]
    assert got == [(0, [b"first"]), (1, [b"second"])]


def test_tensors_read_back_in_every_dtype(tmp_path):
    arrays = {
        "f32": np.array([[1.5, -2.0]], np.float32),
        "f16": np.array([0.5, -1.25, 65504], np.float16),
        "u8": np.array([0, 7, 255], np.uint8),
        "i32": np.array([[-5], [9]], np.int32),
        "c64": np.array([1 + 2j, -3j], np.complex64),
        "b": np.array([True, False, True]),
    }
    with SummaryWriter(tmp_path) as w:
        for tag, arr in arrays.items():
            w.add_tensor(tag, ember.tensor(arr), 0)
        w.add_tensor("bf16", ember.tensor([1.5, -2.0]).to(ember.bfloat16), 0)
    acc = _accumulator(tmp_path)
    for tag, arr in arrays.items():
        back = make_ndarray(acc.Tensors(tag)[0].tensor_proto)
        assert back.dtype == arr.dtype and np.array_equal(back, arr), tag
    # TensorBoard reads bfloat16 only with TensorFlow installed: check the stored bits
    import ml_dtypes

    proto = acc.Tensors("bf16")[0].tensor_proto
    bits = np.array(proto.half_val, np.uint16).view(ml_dtypes.bfloat16)
    assert proto.dtype == types_pb2.DT_BFLOAT16 and bits.astype(float).tolist() == [1.5, -2.0]


def test_hparams_equal_torchs_and_read_back(tmp_path):
    hp = {"lr": 0.01, "layers": 3, "opt": "adam", "bn": True, "skip": None}
    metrics = {"hparam/accuracy": 0.75, "hparam/loss": 0.4}
    domain = {"opt": ["adam", "sgd"], "layers": [2, 3, 4]}

    def calls(w, T):
        w.add_hparams(hp, metrics, domain, run_name="trial1", global_step=5)

    torch_dir, ember_dir = _write_both(tmp_path, calls)
    run = ember_dir / "trial1"
    expected = [(s, v) for s, _, v in _summaries(torch_dir / "trial1")]
    assert [(s, v) for s, _, v in _summaries(run)] == expected
    acc = _accumulator(run)
    content = acc.PluginTagToContent("hparams")
    assert sorted(content) == [
        "_hparams_/experiment",
        "_hparams_/session_end_info",
        "_hparams_/session_start_info",
    ]
    exp = HParamsPluginData.FromString(content["_hparams_/experiment"]).experiment
    assert [h.name for h in exp.hparam_infos] == ["lr", "layers", "opt", "bn"]
    assert [v.string_value for v in exp.hparam_infos[2].domain_discrete.values] == ["adam", "sgd"]
    assert [m.name.tag for m in exp.metric_infos] == list(metrics)
    start = HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    values = start.session_start_info.hparams
    assert (values["lr"].number_value, values["opt"].string_value) == (0.01, "adam")
    assert values["bn"].number_value == 1.0 and "skip" not in values
    (acc_metric,) = acc.Scalars("hparam/accuracy")
    assert (acc_metric.step, acc_metric.value) == (5, 0.75)


def test_hparams_default_run_name_is_the_time(tmp_path):
    before = time.time()
    with SummaryWriter(tmp_path) as w:
        w.add_hparams({"a": 1}, {"m": 2.0})
    (run,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert before <= float(run.name) <= time.time()
    with pytest.raises(TypeError, match="dictionary"):
        SummaryWriter(tmp_path / "x").add_hparams([("a", 1)], {})
    with pytest.raises(TypeError, match=re.escape("hparam_domain_discrete[a]")):
        SummaryWriter(tmp_path / "y").add_hparams({"a": 1}, {}, {"a": ["x"]})


def test_pr_curve_read_back(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_pr_curve(
            "pr", np.array([1, 0, 1, 1]), np.array([0.9, 0.6, 0.4, 0.1]), 0, num_thresholds=5
        )
    (event,) = _accumulator(tmp_path).Tensors("pr")
    tp, fp, tn, fn, precision, recall = make_ndarray(event.tensor_proto)
    assert tp.tolist() == [3, 2, 1, 1, 0] and fp.tolist() == [1, 1, 1, 0, 0]
    assert recall.tolist() == pytest.approx([1, 2 / 3, 1 / 3, 1 / 3, 0])


def test_audio_is_a_wav_of_the_samples(tmp_path):
    sound = np.sin(np.arange(300) / 5)
    with SummaryWriter(tmp_path) as w:
        w.add_audio("tone", ember.tensor(sound).unsqueeze(0), 0, sample_rate=8000)
    (clip,) = _accumulator(tmp_path).Audio("tone")
    assert (clip.sample_rate, clip.length_frames, clip.content_type) == (8000, 300, "audio/wav")
    with wave.open(io.BytesIO(clip.encoded_audio_string)) as wav:
        samples = np.frombuffer(wav.readframes(300), "<i2")
    assert np.array_equal(samples, (sound * 32767).astype("<i2"))


def test_video_is_a_gif_of_the_frames_in_torchs_grid(tmp_path):
    """Three 2x3 videos of 4 frames: padded to four and tiled in one row as torch tiles
    them (its own _prepare_video is the reference); two colour levels, so GIF's palette
    keeps every pixel."""
    from PIL import Image, ImageSequence
    from torch.utils.tensorboard._utils import _prepare_video

    rng = np.random.default_rng(3)
    clip = (rng.integers(0, 2, size=(3, 4, 3, 2, 3)) * 255).astype(np.uint8)
    with SummaryWriter(tmp_path) as w:
        w.add_video("clip", ember.tensor(clip), 0, fps=4)
    (picture,) = _accumulator(tmp_path).Images("clip")
    assert (picture.height, picture.width) == (2, 12)
    gif = Image.open(io.BytesIO(picture.encoded_image_string))
    frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
    want = (_prepare_video(clip) * 255).astype(np.uint8)
    assert len(frames) == 4 and all(np.array_equal(f, w_) for f, w_ in zip(frames, want))
    assert gif.info["duration"] == 250


def test_onnx_graph_reads_back_as_torchs(tmp_path, capsys):
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2))
    path = tmp_path / "model.onnx"
    ember.onnx.export(model, (ember.ones(1, 3),), str(path))
    with SummaryWriter(tmp_path / "ember") as w:
        w.add_onnx_graph(str(path))
    with TorchWriter(str(tmp_path / "torch")) as w:
        w.add_onnx_graph(str(path))
    capsys.readouterr()  # (torch's reader prints each node's name)
    ours, theirs = (_accumulator(tmp_path / k).Graph() for k in ("ember", "torch"))
    assert ours == theirs
    assert [n.op for n in ours.node if n.op != "Variable"] == ["Gemm", "Relu", "Gemm"]


# -- graph --------------------------------------------------------------------------------------


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(4, 3)
            self.seq = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(3, 2))

        def forward(self, x):
            return self.seq(self.fc(x)) * 2

    return Net()


def _graph(path) -> GraphDef:
    return _accumulator(path).Graph()


def test_graph_nodes_ops_edges_and_shapes(tmp_path):
    model = _net(ember)
    model.train()
    with SummaryWriter(tmp_path) as w:
        w.add_graph(model, ember.randn(5, 4))
    assert model.training  # eval only while drawn, as torch does
    acc = _accumulator(tmp_path)
    assert acc.Tags()["graph"] and acc.Tags()["run_metadata"] == ["step1"]
    nodes = {n.name: n for n in _graph(tmp_path).node}
    shape = {
        k: [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape]
        for k, n in nodes.items()
    }
    ops = {k: n.op for k, n in nodes.items()}
    inputs = {k: list(n.input) for k, n in nodes.items()}
    assert ops["input/x"] == "IO Node" and shape["input/x"] == [[5, 4]]
    assert ops["Net/Linear[fc]/weight"] == "prim::GetAttr"
    assert shape["Net/Linear[fc]/weight"] == [[3, 4]]
    assert ops["Net/Linear[fc]/addmm"] == "aten::addmm"
    assert inputs["Net/Linear[fc]/addmm"] == ["Net/Linear[fc]/bias", "input/x", "Net/Linear[fc]/t"]
    assert shape["Net/Linear[fc]/addmm"] == [[5, 3]]
    assert inputs["Net/Sequential[seq]/ReLU[0]/relu"] == ["Net/Linear[fc]/addmm"]
    assert ops["Net/Sequential[seq]/Linear[1]/addmm"] == "aten::addmm"
    assert ops["Net/mul"] == "aten::mul" and nodes["Net/mul"].attr["attr"].s == b"{ other : 2}"
    assert inputs["output/output.1"] == ["Net/mul"] and shape["output/output.1"] == [[5, 2]]
    # every edge ends at a node of the graph
    assert all(i.split(":")[0] in nodes for ins in inputs.values() for i in ins)


def test_graph_scopes_and_io_names_are_torchs(tmp_path):
    with TorchWriter(str(tmp_path / "torch")) as w:
        w.add_graph(_net(torch), torch.randn(5, 4))
    with SummaryWriter(tmp_path / "ember") as w:
        w.add_graph(_net(ember), ember.randn(5, 4))

    def scopes(g):
        return {n.name.rsplit("/", 1)[0] for n in g.node if n.op.startswith("aten::")}

    def io(g):
        return sorted(n.name for n in g.node if n.op == "IO Node")

    theirs, ours = _graph(tmp_path / "torch"), _graph(tmp_path / "ember")
    assert (
        scopes(ours)
        == scopes(theirs)
        == {"Net", "Net/Linear[fc]", "Net/Sequential[seq]/ReLU[0]", "Net/Sequential[seq]/Linear[1]"}
    )
    assert io(ours) == io(theirs) == ["input/x", "output/output.1"]
    assert ours.versions.producer == theirs.versions.producer == 22


def test_graph_of_a_model_with_several_inputs_outputs_and_in_place_ops(tmp_path, capsys):
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.act = nn.ReLU(inplace=True)

        def forward(self, idx, x):
            h = self.act(self.emb(idx) + x)
            a, b = h.split(2, dim=1)
            return {"a": a, "b": b.sum()}

    with SummaryWriter(tmp_path) as w:
        w.add_graph(Two(), (ember.tensor([1, 2, 3]), ember.randn(3, 4)), verbose=True)
    printed = capsys.readouterr().out
    assert "Two/ReLU[act]/relu = aten::relu(Two/add)" in printed
    nodes = {n.name: n for n in _graph(tmp_path).node}
    assert {"input/idx", "input/x", "output/output.1", "output/output.2"} <= set(nodes)
    assert list(nodes["Two/Embedding[emb]/embedding"].input) == ["Two/Embedding[emb]/weight"]
    assert list(nodes["Two/add"].input) == ["Two/Embedding[emb]/embedding", "input/x"]
    split = nodes["Two/split"]
    assert [[d.size for d in s.dim] for s in split.attr["_output_shapes"].list.shape] == [
        [3, 2],
        [3, 2],
    ]
    assert list(nodes["Two/sum"].input) == ["Two/split:1"]
    assert list(nodes["output/output.1"].input) == ["Two/split"]


def test_graph_shared_module_called_twice_and_no_input(tmp_path):
    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.w = nn.Parameter(ember.ones(2))

        def forward(self):
            return self.lin(self.lin(self.w.unsqueeze(0)))

    with SummaryWriter(tmp_path) as w:
        w.add_graph(Twice())
    names = [n.name for n in _graph(tmp_path).node]
    assert names.count("Twice/w") == 1
    assert {"Twice/Linear[lin]/addmm", "Twice/Linear[lin]/addmm.1"} <= set(names)
    assert not any(n.startswith("input/") for n in names)


# -- embeddings ---------------------------------------------------------------------------------


def test_embedding_files_equal_torchs(tmp_path):
    mat = RNG.normal(size=(5, 3)).astype(np.float32)
    imgs = RNG.random((5, 3, 4, 6)).astype(np.float32)

    def calls(w, T):
        w.add_embedding(T.tensor(mat), metadata=list("abcde"), label_img=T.tensor(imgs))
        w.add_embedding(
            mat[:2],
            metadata=[["x", 1], ["y", 2]],
            global_step=3,
            tag="a/b%c",
            metadata_header=["name", "n"],
        )

    torch_dir, ember_dir = _write_both(tmp_path, calls)
    files = sorted(
        str(p.relative_to(ember_dir))
        for p in ember_dir.rglob("*")
        if p.is_file() and "tfevents" not in p.name
    )
    assert files == sorted(
        str(p.relative_to(torch_dir))
        for p in torch_dir.rglob("*")
        if p.is_file() and "tfevents" not in p.name
    )
    assert files == [
        "00000/default/metadata.tsv",
        "00000/default/sprite.png",
        "00000/default/tensors.tsv",
        "00003/a%2fb%25c/metadata.tsv",
        "00003/a%2fb%25c/tensors.tsv",
        "projector_config.pbtxt",
    ]
    for f in files:
        assert (ember_dir / f).read_bytes() == (torch_dir / f).read_bytes(), f
    rows = (ember_dir / "00000/default/tensors.tsv").read_text().splitlines()
    assert np.array([r.split("\t") for r in rows], dtype=np.float32).tolist() == mat.tolist()
    config = (ember_dir / "projector_config.pbtxt").read_text()
    assert 'tensor_name: "default:00000"' in config and "single_image_dim: 6" in config


# -- files: flush, close, log dirs, purge -------------------------------------------------------


def test_flush_close_and_reopen(tmp_path):
    w = SummaryWriter(tmp_path, flush_secs=120)
    w.add_scalar("x", 1.0, 0)
    w.flush()
    assert [v.simple_value for _, _, v in _summaries(tmp_path)] == [1.0]  # on disk, still open
    w.close()
    assert w.file_writer is None and w.all_writers is None
    w.close()  # a second close does nothing
    w.flush()
    w.add_scalar("x", 2.0, 1)  # writing again opens a new event file
    w.close()
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2
    assert [e.value for e in _accumulator(tmp_path).Scalars("x")] == [1.0, 2.0]


def test_context_manager_closes(tmp_path):
    with SummaryWriter(tmp_path, filename_suffix=".ember") as w:
        w.add_text("t", "hi", 0)
        assert w.get_logdir() == tmp_path and w.file_writer.get_logdir() == str(tmp_path)
        assert w.all_writers == {str(tmp_path): w.file_writer}
    assert w.all_writers is None
    (event_file,) = tmp_path.glob("events.out.tfevents.*")
    assert event_file.name.endswith(".ember")
    assert _accumulator(tmp_path).Tags()["tensors"] == ["t/text_summary"]


def test_flush_secs_writes_without_flush(tmp_path):
    w = SummaryWriter(tmp_path, max_queue=1000, flush_secs=1)
    w.add_scalar("x", 5.0, 0)
    deadline = time.monotonic() + 30
    while not _summaries(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert [v.simple_value for _, _, v in _summaries(tmp_path)] == [5.0]
    w.close()


def test_default_log_dir_is_torchs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    w.close()
    pattern = r"runs/[A-Z][a-z]{2}\d{2}_\d{2}-\d{2}-\d{2}_" + re.escape(socket.gethostname())
    assert re.fullmatch(pattern + r"_lr0\.1", w.get_logdir())
    assert list((tmp_path / w.get_logdir()).glob("events.out.tfevents.*"))
    theirs = TorchWriter(comment="_lr0.1")
    theirs.close()
    assert re.fullmatch(pattern + r"_lr0\.1", theirs.get_logdir())
    assert SummaryWriter(tmp_path / "given", comment="ignored").get_logdir() == tmp_path / "given"


def test_purge_step_hides_the_steps_written_after_it(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    time.sleep(1.1)  # the resumed run's event file sorts after the first (names hold seconds)
    with SummaryWriter(tmp_path, purge_step=5) as w:
        assert w.purge_step is None  # used once, when the file is opened
        for step in range(5, 8):
            w.add_scalar("loss", 100.0 + step, step)
    got = [(e.step, e.value) for e in _accumulator(tmp_path).Scalars("loss")]
    assert got == [
        (0, 0.0),
        (1, 1.0),
        (2, 2.0),
        (3, 3.0),
        (4, 4.0),
        (5, 105.0),
        (6, 106.0),
        (7, 107.0),
    ]


# -- packaging: the import, ``python -m ember``, the example -------------------------------------


def _python(*args, cwd=None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONWARNINGS="ignore::DeprecationWarning")
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=cwd, env=env
    )


@pytest.mark.parametrize(
    "block",
    [
        "sys.modules['tensorboard'] = None",
        "import types; sys.modules['tensorboard'] = types.ModuleType('tensorboard')",
        "import types; tb = types.ModuleType('tensorboard'); tb.__version__ = '1.14.2'; "
        "sys.modules['tensorboard'] = tb",
    ],
    ids=["missing", "no-version", "too-old"],
)
def test_import_without_tensorboard_says_what_to_install(block):
    code = f"""
    import sys
    {block}
    try:
        import ember.utils.tensorboard
    except ImportError as e:
        print(type(e).__name__, e)
    """
    done = _python("-c", textwrap.dedent(code))
    assert done.stdout == f"ImportError {MESSAGE}\n", done.stderr


def test_import_ember_does_not_import_tensorboard():
    code = (
        "import sys, ember, ember.utils\n"
        "print('tensorboard' in sys.modules, 'ember.utils.tensorboard' in sys.modules)\n"
    )
    assert _python("-c", code).stdout == "False False\n"


def test_torch_utils_tensorboard_under_python_m_ember(tmp_path):
    program = tmp_path / "log.py"
    program.write_text(
        textwrap.dedent(
            """
            import sys
            import torch
            import torch.utils.tensorboard
            from torch.utils.tensorboard import SummaryWriter

            x = torch.linspace(0, 1, 5)
            with SummaryWriter(sys.argv[1]) as w:
                for step in range(3):
                    w.add_scalar("loss", (x * step).sum(), step, walltime=1.0 + step)
                w.add_histogram("x", x, 0, walltime=1.0)
            print(SummaryWriter.__module__, torch.__name__)
            """
        )
    )
    under_ember = _python("-m", "ember", str(program), str(tmp_path / "e"))
    assert under_ember.stdout == "ember.utils.tensorboard.writer ember\n", under_ember.stderr
    under_torch = _python(str(program), str(tmp_path / "t"))
    assert under_torch.stdout == "torch.utils.tensorboard.writer torch\n", under_torch.stderr
    assert _summaries(tmp_path / "e") == _summaries(tmp_path / "t")
    loss = _accumulator(tmp_path / "e").Scalars("loss")
    assert [(e.step, e.value) for e in loss] == [(0, 0.0), (1, 2.5), (2, 5.0)]


def test_python_m_ember_import_error_names_the_extra():
    code = "import sys; sys.modules['tensorboard'] = None\nimport torch.utils.tensorboard\n"
    done = _python("-m", "ember", "-c", code)
    assert done.returncode == 1 and f"ImportError: {MESSAGE}" in done.stderr


def _load_digits():
    if str(ROOT / "examples") not in sys.path:  # as when run as a script: its folder first
        sys.path.insert(0, str(ROOT / "examples"))  # (it imports examples/_common.py)
    spec = importlib.util.spec_from_file_location(
        "ember_digits_tb", ROOT / "examples" / "digits.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_digits_example_logs_to_tensorboard(tmp_path, capsys):
    digits = _load_digits()
    assert digits.parse_args([]).tensorboard is None  # off unless asked for
    logdir = tmp_path / "tb"
    argv = ["--epochs", "1", "--no-progress", "--out-dir", str(tmp_path / "out")]
    summary = digits.main([*argv, "--tensorboard", str(logdir)])
    assert f"tensorboard: {logdir}" in capsys.readouterr().out
    acc = _accumulator(logdir)
    (loss,) = acc.Scalars("loss/train")
    (accuracy,) = acc.Scalars("accuracy/test")
    assert loss.step == accuracy.step == 1 and 0 < loss.value < 2.5
    assert accuracy.value == pytest.approx(summary["test_accuracy"])
    (weights,) = acc.Histograms("weights/conv1")
    assert weights.histogram_value.num == 16 * 1 * 3 * 3
    nodes = {n.name: n for n in acc.Graph().node}
    assert nodes["Sequential/Conv2d[0]/convolution"].op == "aten::convolution"
    assert list(nodes["Sequential/Conv2d[0]/convolution"].input) == [
        "input/input",
        "Sequential/Conv2d[0]/weight",
        "Sequential/Conv2d[0]/bias",
    ]
    out = nodes["output/output.1"].attr["_output_shapes"].list.shape[0]
    assert [d.size for d in out.dim] == [1, 10]


def test_docstring_examples(tmp_path, monkeypatch):
    from doctests import check_examples

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the examples' mkdtemp() go here
    for name in (
        "ember.utils.tensorboard",
        "ember.utils.tensorboard.summary",
        "ember.utils.tensorboard.writer",
    ):
        check_examples(name)
    assert any(tmp_path.iterdir())  # the examples wrote their logs where they were sent
