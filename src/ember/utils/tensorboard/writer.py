"""``SummaryWriter``: torch's ``torch.utils.tensorboard.writer`` for ember.

Writes scalars, histograms, images, text, hyperparameters, graphs, embeddings and more to
TensorBoard event files through the ``tensorboard`` package's ``EventFileWriter`` (in a
background thread: a write returns at once; ``flush()`` or ``close()`` puts it on disk).
Values may be ember Tensors, NumPy arrays or Python numbers.

Example:
    >>> import tempfile
    >>> import ember
    >>> from ember.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as w:
    ...     for step in range(3):
    ...         w.add_scalar("loss", 1.0 / (step + 1), step)
    ...     w.add_histogram("weights", ember.randn(100), 0)
"""

from __future__ import annotations

import io
import math
import os
import socket
import time
from datetime import datetime
from typing import Any

import numpy as np
from google.protobuf import text_format
from tensorboard.compat import tf
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.proto.event_pb2 import Event, SessionLog
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig
from tensorboard.summary.writer.event_file_writer import EventFileWriter

from .summary import (
    audio,
    custom_scalars,
    default_bins,
    figure_to_image,
    graph,
    histogram,
    histogram_raw,
    hparams,
    image,
    image_boxes,
    make_grid,
    make_np,
    mesh,
    onnx_graph,
    pr_curve,
    pr_curve_raw,
    scalar,
    tensor_proto,
    text,
    video,
)

__all__ = ["FileWriter", "SummaryWriter"]


class FileWriter:
    """Writes ``Event`` protos to one event file in ``log_dir`` (created with it), queued and
    written by a background thread: at most ``max_queue`` pending events, flushed at least
    every ``flush_secs`` seconds; the file name ends with ``filename_suffix``.

    Example:
        >>> import tempfile
        >>> from ember.utils.tensorboard.writer import FileWriter
        >>> from ember.utils.tensorboard.summary import scalar
        >>> fw = FileWriter(tempfile.mkdtemp())
        >>> fw.add_summary(scalar("x", 1.0), global_step=0)
        >>> fw.close()
    """

    def __init__(
        self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        # A pathlib.Path is welcome: the writer wants a string.
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        """The directory the event file is in."""
        return self.event_writer.get_logdir()

    def add_event(self, event: Event, step: int | None = None, walltime: float | None = None):
        """Write ``event``, stamped with ``walltime`` (now by default) and ``step``."""
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)  # a NumPy or ember integer is not a protobuf int64
        self.event_writer.add_event(event)

    def add_summary(
        self, summary: Any, global_step: int | None = None, walltime: float | None = None
    ) -> None:
        """Write a ``Summary`` proto as an event at ``global_step``."""
        self.add_event(event_pb2.Event(summary=summary), global_step, walltime)

    def add_graph(self, graph_profile: tuple, walltime: float | None = None) -> None:
        """Write a ``(GraphDef, RunMetadata)`` pair: the graph, and the run metadata tagged
        ``step1`` as torch writes it."""
        graph_def, stepstats = graph_profile
        self.add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), None, walltime)
        tagged = event_pb2.TaggedRunMetadata(
            tag="step1", run_metadata=stepstats.SerializeToString()
        )
        self.add_event(event_pb2.Event(tagged_run_metadata=tagged), None, walltime)

    def add_onnx_graph(self, graph: Any, walltime: float | None = None) -> None:
        """Write a ``GraphDef`` proto as it is."""
        self.add_event(event_pb2.Event(graph_def=graph.SerializeToString()), None, walltime)

    def flush(self) -> None:
        """Write every pending event to disk."""
        self.event_writer.flush()

    def close(self) -> None:
        """Flush and close the event file."""
        self.event_writer.close()

    def reopen(self) -> None:
        """After ``close()``, write again (into a new event file in the same directory)."""
        self.event_writer.reopen()


def _gfile_join(a: str, b: str) -> str:
    # tensorboard's stub of TensorFlow and TensorFlow itself spell join differently.
    if hasattr(tf.io.gfile, "join"):
        return tf.io.gfile.join(a, b)
    return tf.io.gfile.get_filesystem(a).join(a, b)


def _write_file(path: str, data: bytes) -> None:
    # Through TensorBoard's file layer, as the event files are: log dirs may be remote.
    with tf.io.gfile.GFile(path, "wb") as f:
        f.write(data)


class SummaryWriter:
    """Writes summaries to event files in ``log_dir`` for TensorBoard (torch's
    ``SummaryWriter``).

    Args:
        log_dir: where to write; by default ``runs/<Mon><DD>_<HH-MM-SS>_<hostname><comment>``
            (a new directory per run).
        comment: appended to the default ``log_dir`` (ignored when ``log_dir`` is given).
        purge_step: when a crashed run restarts at step T, events at steps >= T written
            before are hidden by TensorBoard (use the same ``log_dir``).
        max_queue: events queued before an ``add_*`` call forces a write.
        flush_secs: how often, in seconds, pending events are written.
        filename_suffix: appended to the event file names.

    ``file_writer`` is the ``FileWriter`` of ``log_dir``; ``all_writers`` maps every
    directory written (``add_scalars`` writes one per line) to its writer. Both are None
    after ``close()``; an ``add_*`` call afterwards opens a new event file.

    Example:
        >>> import tempfile
        >>> import ember
        >>> from ember.utils.tensorboard import SummaryWriter
        >>> w = SummaryWriter(tempfile.mkdtemp(), comment="ignored")
        >>> w.add_scalars("loss", {"train": 0.5, "test": 0.7}, global_step=1)
        >>> w.add_image("zeros", ember.zeros(3, 8, 8), 0)
        >>> w.add_text("note", "hello", 0)
        >>> len(w.all_writers)
        3
        >>> w.close()
    """

    def __init__(
        self,
        log_dir: Any = None,
        comment: str = "",
        purge_step: int | None = None,
        max_queue: int = 10,
        flush_secs: int = 120,
        filename_suffix: str = "",
    ) -> None:
        if not log_dir:
            stamp = datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", stamp + "_" + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict | None = None
        self._get_file_writer()
        self.default_bins = default_bins

    def _get_file_writer(self) -> FileWriter:
        """The writer of ``log_dir``, (re)opened if closed."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(
                self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix
            )
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the events at or after a SessionLog.START's step that
                # came before it in the run: that is how a restart purges.
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(
                    Event(step=step, session_log=SessionLog(status=SessionLog.START))
                )
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        """The directory the event files are written to."""
        return self.log_dir

    # -- scalars ------------------------------------------------------------------------------

    def add_scalar(
        self,
        tag: str,
        scalar_value: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        new_style: bool = False,
        double_precision: bool = False,
    ) -> None:
        """Log one number (a Python number, or a one-element tensor or array) under ``tag``.

        ``new_style`` writes it as a tensor (faster for TensorBoard to load), float64 with
        ``double_precision``; the old style is a float32 ``simple_value``.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_scalar("y=2x", 4, global_step=2, new_style=True)
        """
        summary = scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(
        self,
        main_tag: str,
        tag_scalar_dict: dict,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log several numbers in one chart ``main_tag``: each key's values go to its own
        run, the sub-directory ``<log_dir>/<main_tag>_<key>`` (``/`` in ``main_tag`` written
        ``_``), all stamped with one wall time.

        Example:
            >>> import os, tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_scalars("run", {"sin": 0.0, "cos": 1.0}, 0)
            ...     sorted(os.path.basename(d) for d in w.all_writers)[:2]
            ['run_cos', 'run_sin']
        """
        walltime = time.time() if walltime is None else walltime
        root = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            sub = root + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(sub)
            if writer is None:
                writer = FileWriter(sub, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[sub] = writer
            writer.add_summary(scalar(main_tag, value), global_step, walltime)

    def add_tensor(
        self,
        tag: str,
        tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a whole tensor (any shape and dtype) for the tensor plugin.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_tensor("x", ember.tensor([1, 2, 3]), 0)
        """
        self._get_file_writer().add_summary(tensor_proto(tag, tensor), global_step, walltime)

    # -- histograms ---------------------------------------------------------------------------

    def add_histogram(
        self,
        tag: str,
        values: Any,
        global_step: int | None = None,
        bins: Any = "tensorflow",
        walltime: float | None = None,
        max_bins: int | None = None,
    ) -> None:
        """Log the histogram of ``values``. ``bins`` is ``"tensorflow"`` (TensorFlow's
        exponential buckets, the default), or what ``numpy.histogram`` takes (``"auto"``,
        ``"fd"``, a count, edges); ``max_bins`` merges neighbouring buckets down to at most
        that many.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     for i in range(3):
            ...         w.add_histogram("centers", ember.rand(1000) + i, i, bins="auto")
        """
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        summary = histogram(tag, values, bins, max_bins=max_bins)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_histogram_raw(
        self,
        tag: str,
        min: float,  # noqa: A002  (torch's argument names)
        max: float,  # noqa: A002
        num: int,
        sum: float,  # noqa: A002
        sum_squares: float,
        bucket_limits: Any,
        bucket_counts: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a histogram given by its statistics and buckets (``bucket_limits`` are the
        buckets' right edges, one per count).

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_histogram_raw("h", 0, 2, 3, 3, 5, [1, 2], [1, 2], global_step=0)
        """
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        summary = histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits, bucket_counts)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- images, figures, sound --------------------------------------------------------------

    def add_image(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "CHW",
    ) -> None:
        """Log an image: ``(3, H, W)`` by default, or the layout ``dataformats`` names
        (``"HWC"``, ``"HW"``, ``"CHW"`` with 1 channel...). uint8 values are taken as they
        are; others (floats) in ``[0, 1]``, scaled by 255. Needs Pillow.

        Example:
            >>> import tempfile
            >>> import numpy as np
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_image("ramp", np.linspace(0, 1, 50).reshape(5, 10), 0, dataformats="HW")
        """
        summary = image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_images(
        self,
        tag: str,
        img_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        dataformats: str = "NCHW",
    ) -> None:
        """Log a batch of images ``(N, 3, H, W)`` (or ``dataformats``) as one image: a grid
        of up to 8 per row.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_images("batch", ember.rand(16, 1, 8, 8), 0)
        """
        summary = image(tag, img_tensor, dataformats=dataformats)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        rescale: float = 1,
        dataformats: str = "CHW",
        labels: Any = None,
    ) -> None:
        """Log an image with boxes ``(N, 4)`` = ``(xmin, ymin, xmax, ymax)`` drawn on it,
        each with its label if ``labels`` has one per box.

        Example:
            >>> import tempfile
            >>> import numpy as np
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_image_with_boxes("boxes", np.zeros((3, 20, 20)), np.array([[2, 2, 9, 9]]))
        """
        if labels is not None:
            if isinstance(labels, str):
                labels = [labels]
            if len(labels) != box_tensor.shape[0]:
                labels = None  # torch drops labels that do not match the boxes
        summary = image_boxes(
            tag, img_tensor, box_tensor, rescale=rescale, dataformats=dataformats, labels=labels
        )
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: int | None = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of figures, as a grid) as an image; the
        figure is closed unless ``close`` is False. Needs matplotlib.

        Example:
            >>> import tempfile
            >>> import matplotlib
            >>> matplotlib.use("Agg")
            >>> import matplotlib.pyplot as plt
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> fig = plt.figure(figsize=(2, 2), dpi=20)
            >>> _ = plt.plot([1, 3, 2])
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_figure("plot", fig, 0)
        """
        fmt = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime, fmt)

    def add_audio(
        self,
        tag: str,
        snd_tensor: Any,
        global_step: int | None = None,
        sample_rate: int = 44100,
        walltime: float | None = None,
    ) -> None:
        """Log mono sound ``(1, L)`` with values in ``[-1, 1]`` as 16-bit WAV.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_audio("tone", ember.sin(ember.arange(800.0) / 5).unsqueeze(0), 0, 8000)
        """
        summary = audio(tag, snd_tensor, sample_rate=sample_rate)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_video(
        self,
        tag: str,
        vid_tensor: Any,
        global_step: int | None = None,
        fps: float = 4,
        walltime: float | None = None,
    ) -> None:
        """Log videos ``(N, T, C, H, W)`` as one animated GIF (the batch in a grid; uint8 in
        ``[0, 255]``, others in ``[0, 1]``). Needs Pillow (torch's needs moviepy).

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_video("clip", ember.rand(2, 5, 3, 8, 8), 0, fps=10)
        """
        summary = video(tag, vid_tensor, fps)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- text, hyperparameters ---------------------------------------------------------------

    def add_text(
        self,
        tag: str,
        text_string: str,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a string (rendered as Markdown by TensorBoard).

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_text("lstm", "This is an lstm", 0)
        """
        self._get_file_writer().add_summary(text(tag, text_string), global_step, walltime)

    def add_hparams(
        self,
        hparam_dict: dict,
        metric_dict: dict,
        hparam_domain_discrete: dict | None = None,
        run_name: str | None = None,
        global_step: int | None = None,
    ) -> None:
        """Log one trial's hyperparameters (numbers, bools, strings, one-element tensors or
        None) with its metrics, for the HParams dashboard: written to the run
        ``<log_dir>/<run_name>`` (the current time by default), the metrics as scalars
        there too. ``hparam_domain_discrete`` lists the values a hyperparameter can take.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     for i in range(3):
            ...         w.add_hparams({"lr": 0.1 * i, "bsize": i}, {"hparam/accuracy": 10 * i})
        """
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w:
            for summary in (exp, ssi, sei):
                w.file_writer.add_summary(summary, global_step)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def add_custom_scalars(self, layout: dict) -> None:
        """Log the layout of custom charts over scalar tags: ``{category: {chart: [kind,
        tags]}}`` with kind ``"Multiline"`` (any tags) or ``"Margin"`` (value, lower, upper).

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_custom_scalars({"losses": {"all": ["Multiline", ["loss/a", "loss/b"]]}})
        """
        self._get_file_writer().add_summary(custom_scalars(layout))

    def add_custom_scalars_multilinechart(
        self, tags: list, category: str = "default", title: str = "untitled"
    ) -> None:
        """``add_custom_scalars`` with one multiline chart of ``tags``.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_custom_scalars_multilinechart(["twse/0050", "twse/2330"])
        """
        self._get_file_writer().add_summary(
            custom_scalars({category: {title: ["Multiline", tags]}})
        )

    def add_custom_scalars_marginchart(
        self, tags: list, category: str = "default", title: str = "untitled"
    ) -> None:
        """``add_custom_scalars`` with one margin chart of three tags: value, lower, upper.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_custom_scalars_marginchart(["m/mean", "m/low", "m/high"])
        """
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self._get_file_writer().add_summary(custom_scalars({category: {title: ["Margin", tags]}}))

    # -- curves, meshes ----------------------------------------------------------------------

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log the precision-recall curve of ``predictions`` (probabilities in ``[0, 1]``)
        against binary ``labels``.

        Example:
            >>> import tempfile
            >>> import numpy as np
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_pr_curve("pr", np.array([0, 1, 1, 0]), np.array([0.1, 0.8, 0.6, 0.4]), 0)
        """
        labels, predictions = make_np(labels), make_np(predictions)
        summary = pr_curve(tag, labels, predictions, num_thresholds, weights)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve given by its counts, precision and recall, one value
        per threshold each.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_pr_curve_raw("pr", [2, 1], [1, 0], [0, 1], [0, 1], [0.7, 1], [1, 0.5],
            ...                        num_thresholds=2)
        """
        summary = pr_curve_raw(
            tag,
            true_positive_counts,
            false_positive_counts,
            true_negative_counts,
            false_negative_counts,
            precision,
            recall,
            num_thresholds,
            weights,
        )
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_mesh(
        self,
        tag: str,
        vertices: Any,
        colors: Any = None,
        faces: Any = None,
        config_dict: dict | None = None,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a mesh or point cloud: ``(B, N, 3)`` vertices, optional colors (uint8 in
        ``[0, 255]``) and faces (vertex indices), and a three.js ``config_dict``.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> v = ember.tensor([[[1.0, 1, 1], [-1, -1, 1], [1, -1, -1], [-1, 1, -1]]])
            >>> f = ember.tensor([[[0, 2, 3], [0, 3, 1], [0, 1, 2], [1, 3, 2]]])
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_mesh("tetra", vertices=v, faces=f)
        """
        summary = mesh(tag, vertices, colors, faces, config_dict)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    # -- graph, embeddings --------------------------------------------------------------------

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Log the graph of ``model`` run on ``input_to_model`` (a tensor or a tuple of
        them), for the Graphs dashboard.

        The graph is ember's autograd graph of one forward run (see ``summary.graph``): ops
        named ``aten::<op>`` in the scopes of the modules that ran them
        (``Net/Linear[fc]/addmm``), parameters, inputs and outputs, each with its shapes.
        ``verbose`` prints the nodes; ``use_strict_trace`` is accepted for torch's signature.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU())
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_graph(model, ember.randn(2, 4))
        """
        self._get_file_writer().add_graph(graph(model, input_to_model, verbose, use_strict_trace))

    def add_onnx_graph(self, prototxt: Any) -> None:
        """Log the graph of an ONNX file (``prototxt``: its path), as torch reads it (see
        ``summary.onnx_graph``). Needs ``onnx``; ``add_graph`` draws a module directly.

        Example:
            >>> import tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> folder = tempfile.mkdtemp()
            >>> ember.onnx.export(ember.nn.Linear(2, 1), (ember.ones(1, 2),), folder + "/m.onnx")
            >>> with SummaryWriter(folder) as w:
            ...     w.add_onnx_graph(folder + "/m.onnx")
        """
        self._get_file_writer().add_onnx_graph(onnx_graph(prototxt))

    @staticmethod
    def _encode(rawstr: str) -> str:
        # The tag names a directory: '%', '/' and '\\' percent-encoded, as torch does.
        return rawstr.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")

    def add_embedding(
        self,
        mat: Any,
        metadata: list | None = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: list | None = None,
    ) -> None:
        """Log points ``mat`` ``(N, D)`` for the Projector, with a label per point
        (``metadata``; a list of rows with ``metadata_header``) and an image per point
        (``label_img``, ``(N, C, H, W)``).

        Writes, as torch does, ``<log_dir>/<step:05d>/<tag>/`` holding ``tensors.tsv``,
        ``metadata.tsv`` and ``sprite.png``, and ``<log_dir>/projector_config.pbtxt``
        listing every embedding this writer logged.

        Example:
            >>> import os, tempfile
            >>> import ember
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> with SummaryWriter(tempfile.mkdtemp()) as w:
            ...     w.add_embedding(ember.randn(4, 3), metadata=["a", "b", "c", "d"])
            ...     sorted(os.listdir(os.path.join(w.get_logdir(), "00000", "default")))
            ['metadata.tsv', 'tensors.tsv']
        """
        mat = make_np(mat)
        if global_step is None:
            global_step = 0
        subdir = f"{str(global_step).zfill(5)}/{self._encode(tag)}"
        logdir = self._get_file_writer().get_logdir()
        save_path = _gfile_join(logdir, subdir)
        fs = tf.io.gfile
        if fs.exists(save_path):
            if not fs.isdir(save_path):
                raise NotADirectoryError(
                    f"Path: `{save_path}` exists, but is a file. Cannot proceed."
                )
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        else:
            fs.makedirs(save_path)

        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            if metadata_header:
                if len(metadata_header) != len(metadata[0]):
                    raise AssertionError(
                        "len of header must be equal to the number of columns in metadata"
                    )
                lines = ["\t".join(str(e) for e in row) for row in [metadata_header, *metadata]]
            else:
                lines = [str(x) for x in metadata]
            _write_file(_gfile_join(save_path, "metadata.tsv"), ("\n".join(lines) + "\n").encode())
        if label_img is not None:
            label_img = make_np(label_img)
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _write_file(_gfile_join(save_path, "sprite.png"), _sprite(label_img))
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        rows = ["\t".join(str(v.item()) for v in row) + "\n" for row in mat]
        _write_file(_gfile_join(save_path, "tensors.tsv"), "".join(rows).encode())

        # The config lists every embedding: it is rewritten whole (file systems behind
        # gfile need not append).
        if not hasattr(self, "_projector_config"):
            self._projector_config = ProjectorConfig()
        info = EmbeddingInfo(
            tensor_name=f"{tag}:{str(global_step).zfill(5)}",
            tensor_path=_gfile_join(subdir, "tensors.tsv"),
        )
        if metadata is not None:
            info.metadata_path = _gfile_join(subdir, "metadata.tsv")
        if label_img is not None:
            info.sprite.image_path = _gfile_join(subdir, "sprite.png")
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        self._projector_config.embeddings.extend([info])
        config = text_format.MessageToString(self._projector_config)
        _write_file(_gfile_join(logdir, "projector_config.pbtxt"), config.encode())

    # -- files -------------------------------------------------------------------------------

    def flush(self) -> None:
        """Write every pending event of every writer to disk.

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> w = SummaryWriter(tempfile.mkdtemp())
            >>> w.add_scalar("x", 1.0)
            >>> w.flush()
            >>> w.close()
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        """Flush and close every event file (a second call does nothing).

        Example:
            >>> import tempfile
            >>> from ember.utils.tensorboard import SummaryWriter
            >>> w = SummaryWriter(tempfile.mkdtemp())
            >>> w.close()
            >>> w.file_writer is None and w.all_writers is None
            True
        """
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()


def _sprite(label_img: Any) -> bytes:
    """The label images ``(N, C, H, W)`` in ``[0, 1]`` tiled into one square PNG, as the
    Projector wants: ``ceil(sqrt(N))`` per row, the missing rows black."""
    # Deferred: Pillow is needed only for images.
    from PIL import Image

    per_row = math.ceil(label_img.shape[0] ** 0.5)
    grid = make_grid(label_img, ncols=per_row).transpose(1, 2, 0)
    side = grid.shape[1]
    square = np.zeros((side, side, 3))
    square[: grid.shape[0]] = grid
    picture = Image.fromarray(np.uint8((square * 255).clip(0, 255)))
    with io.BytesIO() as out:
        picture.save(out, format="PNG")
        return out.getvalue()
