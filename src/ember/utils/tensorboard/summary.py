"""The protocol buffers ``SummaryWriter`` writes: torch's ``torch.utils.tensorboard.summary``
for ember.

Each function turns ember Tensors, NumPy arrays or Python numbers into the TensorBoard
``Summary`` (or ``GraphDef``) that torch's function of the same name makes, built from the
``tensorboard`` package's own protos, so that TensorBoard reads what ember writes exactly as
it reads what torch writes. ``graph`` builds the ``GraphDef`` of a module from ember's own
autograd graph (torch traces with TorchScript, which ember does not have).

Example:
    >>> from ember.utils.tensorboard.summary import scalar
    >>> scalar("loss", 0.25).value[0].simple_value
    0.25
"""

from __future__ import annotations

import inspect
import io
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from google.protobuf import struct_pb2
from tensorboard.compat.proto.attr_value_pb2 import AttrValue
from tensorboard.compat.proto.config_pb2 import RunMetadata
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.node_def_pb2 import NodeDef
from tensorboard.compat.proto.step_stats_pb2 import DeviceStepStats, StepStats
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.compat.proto.versions_pb2 import VersionDef
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

from ..._tensor import Tensor
from ...autograd.grad_mode import enable_grad
from ...autograd.graph import AccumulateGrad

__all__ = [
    "audio",
    "compute_curve",
    "convert_to_HWC",
    "custom_scalars",
    "default_bins",
    "figure_to_image",
    "graph",
    "histogram",
    "histogram_raw",
    "hparams",
    "image",
    "image_boxes",
    "make_grid",
    "make_histogram",
    "make_image",
    "make_np",
    "mesh",
    "pr_curve",
    "pr_curve_raw",
    "scalar",
    "tensor_proto",
    "text",
]


# -- values ----------------------------------------------------------------------------------


def make_np(x: Any) -> np.ndarray:
    """``x`` as a NumPy array: an array as is, a Python or NumPy scalar as a 1-element array,
    an ember Tensor detached (bfloat16 as float16, as torch does: NumPy has no bfloat16).

    Example:
        >>> import ember
        >>> from ember.utils.tensorboard.summary import make_np
        >>> make_np(ember.ones(2, requires_grad=True)), make_np(3)
        (array([1., 1.], dtype=float32), array([3]))
    """
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        arr = x.detach().cpu().numpy()
        if arr.dtype.name == "bfloat16":
            arr = arr.astype(np.float16)
        return arr
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def _array(x: Any) -> np.ndarray:
    """``make_np`` that also takes lists and tuples of numbers."""
    return np.asarray(x) if isinstance(x, (list, tuple)) else make_np(x)


def _plugin_metadata(name: str, content: bytes = b"") -> SummaryMetadata:
    return SummaryMetadata(
        plugin_data=SummaryMetadata.PluginData(plugin_name=name, content=content)
    )


def _shape_proto(shape: Sequence[int]) -> TensorShapeProto:
    return TensorShapeProto(dim=[TensorShapeProto.Dim(size=int(d)) for d in shape])


# -- scalars and tensors -----------------------------------------------------------------------


def scalar(
    name: str,
    tensor: Any,
    collections: Any = None,
    new_style: bool = False,
    double_precision: bool = False,
) -> Summary:
    """A ``Summary`` holding one scalar: the old ``simple_value`` field (a float32), or with
    ``new_style`` a tensor for the scalars plugin (float32, or float64 with
    ``double_precision``). ``collections`` is accepted for torch's signature and unused.

    Raises:
        AssertionError: ``tensor`` holds more than one value (torch's exception).

    Example:
        >>> from ember.utils.tensorboard.summary import scalar
        >>> v = scalar("lr", 0.1, new_style=True, double_precision=True).value[0]
        >>> v.tag, list(v.tensor.double_val), v.metadata.plugin_data.plugin_name
        ('lr', [0.1], 'scalars')
    """
    arr = make_np(tensor).squeeze()
    if arr.ndim != 0:
        raise AssertionError(
            "Tensor should contain one element (0 dimensions). "
            f"Was given size: {arr.size} and {arr.ndim} dimensions."
        )
    value = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=value)])
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    return Summary(
        value=[Summary.Value(tag=name, tensor=proto, metadata=_plugin_metadata("scalars"))]
    )


def _bits16(arr: np.ndarray) -> list:
    # half_val holds the 16-bit patterns of float16/bfloat16 values (TensorBoard's reader
    # reinterprets them as such; torch writes the float32 bits there, which reads back wrong).
    return arr.reshape(-1).view(np.uint16).tolist()


def _complex_parts(arr: np.ndarray) -> list:
    return np.stack([arr.real, arr.imag], -1).reshape(-1).tolist()


def _plain(arr: np.ndarray) -> list:
    return arr.reshape(-1).tolist()


# NumPy dtype name -> (TensorProto dtype, the field holding the values, conversion)
_TENSOR_FIELDS = {
    "float16": ("DT_HALF", "half_val", _bits16),
    "bfloat16": ("DT_BFLOAT16", "half_val", _bits16),
    "float32": ("DT_FLOAT", "float_val", _plain),
    "float64": ("DT_DOUBLE", "double_val", _plain),
    "int8": ("DT_INT8", "int_val", _plain),
    "int16": ("DT_INT16", "int_val", _plain),
    "int32": ("DT_INT32", "int_val", _plain),
    "int64": ("DT_INT64", "int64_val", _plain),
    "uint8": ("DT_UINT8", "int_val", _plain),
    "uint16": ("DT_UINT16", "int_val", _plain),
    "uint32": ("DT_UINT32", "uint32_val", _plain),
    "uint64": ("DT_UINT64", "uint64_val", _plain),
    "bool": ("DT_BOOL", "bool_val", _plain),
    "complex64": ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    "complex128": ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor_proto(tag: str, tensor: Any) -> Summary:
    """A ``Summary`` holding the whole tensor (``add_tensor``), for the tensor plugin; it
    reads back with ``tensorboard.util.tensor_util.make_ndarray``.

    Example:
        >>> import ember
        >>> from tensorboard.util.tensor_util import make_ndarray
        >>> from ember.utils.tensorboard.summary import tensor_proto
        >>> v = tensor_proto("t", ember.tensor([[1, 2, 3]])).value[0]
        >>> make_ndarray(v.tensor)
        array([[1, 2, 3]])
    """
    if isinstance(tensor, Tensor):
        arr = tensor.detach().cpu().numpy()  # bfloat16 kept: the proto has a type for it
    else:
        arr = np.asarray(tensor)
    if arr.size * arr.itemsize >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if arr.dtype.name not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {arr.dtype}")
    dtype, field, convert = _TENSOR_FIELDS[arr.dtype.name]
    proto = TensorProto(dtype=dtype, tensor_shape=_shape_proto(arr.shape))
    getattr(proto, field).extend(convert(arr))
    return Summary(
        value=[Summary.Value(tag=tag, metadata=_plugin_metadata("tensor"), tensor=proto)]
    )


# -- histograms -----------------------------------------------------------------------------


def _tensorflow_bins() -> list:
    # TensorFlow's default bucket edges: +-1e-12 growing by 10% up to 1e20, and 0. Built by
    # repeated multiplication (not powers) so that the float edges equal torch's bit for bit.
    v, pos = 1e-12, []
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    return [-b for b in reversed(pos)] + [0] + pos


default_bins: list = _tensorflow_bins()


def histogram_raw(
    name: str,
    min: float,  # noqa: A002  (torch's argument names)
    max: float,  # noqa: A002
    num: int,
    sum: float,  # noqa: A002
    sum_squares: float,
    bucket_limits: Sequence[float],
    bucket_counts: Sequence[float],
) -> Summary:
    """A ``Summary`` holding a histogram given by its statistics and buckets (each limit is a
    bucket's right edge).

    Example:
        >>> from ember.utils.tensorboard.summary import histogram_raw
        >>> h = histogram_raw("h", 0, 2, 3, 3, 5, [1, 2], [1, 2]).value[0].histo
        >>> list(h.bucket_limit), list(h.bucket)
        ([1.0, 2.0], [1.0, 2.0])
    """
    hist = HistogramProto(
        min=min,
        max=max,
        num=num,
        sum=sum,
        sum_squares=sum_squares,
        bucket_limit=_array(bucket_limits).reshape(-1).tolist(),
        bucket=_array(bucket_counts).reshape(-1).tolist(),
    )
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Summary:
    """A ``Summary`` holding the histogram of ``values`` (any shape) with NumPy's ``bins``
    (a count, edges, or a rule name such as ``"auto"``).

    Example:
        >>> import ember
        >>> from ember.utils.tensorboard.summary import histogram
        >>> h = histogram("w", ember.tensor([0.0, 1.0, 1.0, 3.0]), bins=3).value[0].histo
        >>> h.num, h.max, list(h.bucket)
        (4.0, 3.0, [0.0, 1.0, 2.0, 1.0])
    """
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> HistogramProto:
    """The ``HistogramProto`` of ``values``, binned as torch bins them: NumPy's histogram,
    merged down to at most ``max_bins`` buckets, cut to the buckets from the first to the
    last nonempty one, with one empty bucket in front (TensorBoard stores right edges only,
    so that bucket's edge is the data's left edge).

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import make_histogram
        >>> h = make_histogram(np.array([2.0, 2.5, 3.0]), bins=[0, 1, 2, 3])
        >>> list(h.bucket_limit), list(h.bucket)
        ([2.0, 3.0], [0.0, 3.0])
    """
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    n = len(counts)
    if max_bins is not None and n > max_bins:
        group = n // max_bins
        rest = n % group
        if rest:
            counts = np.pad(counts, [[0, group - rest]], mode="constant")
        counts = counts.reshape(-1, group).sum(axis=-1)
        merged = np.empty((counts.size + 1,), limits.dtype)
        merged[:-1] = limits[:-1:group]
        merged[-1] = limits[-1]
        limits = merged
    # The support, from the first to the last bucket holding a value: where the running
    # count of nonempty buckets leaves 0 and where it reaches its total. (With every bucket
    # empty, values outside given edges, this leaves nothing and raises below, as in torch.)
    seen = np.cumsum(counts > 0)
    start, end = np.searchsorted(seen, [0, seen[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    if start > 0:
        counts = counts[start - 1 : end]
    else:
        counts = np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(),
        max=values.max(),
        num=len(values),
        sum=values.sum(),
        sum_squares=values.dot(values),
        bucket_limit=limits.tolist(),
        bucket=counts.tolist(),
    )


# -- images ----------------------------------------------------------------------------------


def make_grid(images: np.ndarray, ncols: int = 8) -> np.ndarray:
    """Tile ``(N, 1|3, H, W)`` images into one ``(3, rows*H, ncols*W)`` image, row by row
    (gray images repeated to RGB; the unused cells are zero).

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import make_grid
        >>> make_grid(np.ones((10, 1, 2, 3)), ncols=4).shape
        (3, 6, 12)
    """
    if not isinstance(images, np.ndarray):
        raise AssertionError("plugin error, should pass numpy array here")
    if images.shape[1] == 1:
        images = np.concatenate([images, images, images], 1)
    if images.ndim != 4 or images.shape[1] != 3:
        raise AssertionError("Input should be a 4D numpy array with 3 channels")
    n, _, h, w = images.shape
    ncols = min(n, ncols)
    nrows = -(-n // ncols)
    canvas = np.zeros((3, h * nrows, w * ncols), dtype=images.dtype)
    for i in range(n):
        y, x = divmod(i, ncols)
        canvas[:, y * h : (y + 1) * h, x * w : (x + 1) * w] = images[i]
    return canvas


def convert_to_HWC(tensor: np.ndarray, input_format: str) -> np.ndarray:  # noqa: N802
    """An image array in ``input_format`` (``"CHW"``, ``"HWC"``, ``"HW"``, ``"NCHW"``...) as
    ``(H, W, C)``: a batch tiled with ``make_grid``, one channel or none repeated to RGB.

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import convert_to_HWC
        >>> convert_to_HWC(np.zeros((3, 4, 5)), "CHW").shape
        (4, 5, 3)
        >>> convert_to_HWC(np.zeros((4, 5)), "HW").shape
        (4, 5, 3)
    """
    if len(set(input_format)) != len(input_format):
        raise AssertionError(
            f"You can not use the same dimension shorthand twice. input_format: {input_format}"
        )
    if tensor.ndim != len(input_format):
        raise AssertionError(
            "size of input tensor and input format are different. "
            f"tensor shape: {tensor.shape}, input_format: {input_format}"
        )
    fmt = input_format.upper()
    if len(fmt) == 4:
        nchw = tensor.transpose([fmt.find(c) for c in "NCHW"])
        return make_grid(nchw).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = tensor.transpose([fmt.find(c) for c in "HWC"])
        if hwc.shape[2] == 1:
            hwc = np.concatenate([hwc, hwc, hwc], 2)
        return hwc
    if len(fmt) == 2:
        hw = tensor.transpose([fmt.find(c) for c in "HW"])
        return np.stack([hw, hw, hw], 2)
    raise AssertionError(f"unsupported image format {input_format!r}")


def _to_uint8(arr: np.ndarray) -> np.ndarray:
    # Values are taken as [0, 255] for uint8 and [0, 1] for anything else, as torch does.
    scale = 1 if arr.dtype == np.uint8 else 255
    return (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def _draw_box(image, box, label: str | None, color: str = "Red", thickness: int = 2):
    # Deferred: Pillow is needed only for images.
    from PIL import ImageDraw, ImageFont

    draw = ImageDraw.Draw(image)
    left, top, right, bottom = (float(v) for v in box)
    corners = [(left, top), (left, bottom), (right, bottom), (right, top), (left, top)]
    draw.line(corners, width=thickness, fill=color)
    if label:
        font = ImageFont.load_default()
        x0, y0, x1, y1 = font.getbbox(label)
        tw, th = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * th)
        draw.rectangle([(left, bottom - th - 2 * margin), (left + tw, bottom)], fill=color)
        draw.text((left + margin, bottom - th - margin), label, fill="black", font=font)
    return image


def make_image(
    tensor: np.ndarray, rescale: float = 1, rois: Any = None, labels: Any = None
) -> Summary.Image:
    """An ``(H, W, C)`` uint8 array as a PNG ``Summary.Image`` (boxes ``rois`` drawn on it,
    resized by ``rescale``). Needs Pillow.

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import make_image
        >>> im = make_image(np.zeros((2, 3, 3), np.uint8))
        >>> im.height, im.width, im.colorspace, im.encoded_image_string[1:4]
        (2, 3, 3, b'PNG')
    """
    # Deferred: Pillow is needed only for images.
    from PIL import Image

    height, width, channels = tensor.shape
    picture = Image.fromarray(tensor)
    if rois is not None:
        for i in range(rois.shape[0]):
            picture = _draw_box(picture, rois[i, :4], None if labels is None else labels[i])
    size = (int(width * rescale), int(height * rescale))
    if size != picture.size:
        picture = picture.resize(size, Image.Resampling.LANCZOS)
    with io.BytesIO() as out:
        picture.save(out, format="PNG")
        png = out.getvalue()
    return Summary.Image(height=height, width=width, colorspace=channels, encoded_image_string=png)


def image(tag: str, tensor: Any, rescale: float = 1, dataformats: str = "NCHW") -> Summary:
    """A ``Summary`` holding ``tensor`` as a PNG image: uint8 values as they are, others
    (floats) taken in ``[0, 1]`` and scaled by 255, clipped to ``[0, 255]``.

    Example:
        >>> import ember
        >>> from ember.utils.tensorboard.summary import image
        >>> im = image("x", ember.ones(1, 4, 6), dataformats="CHW").value[0].image
        >>> im.height, im.width, im.colorspace
        (4, 6, 3)
    """
    arr = convert_to_HWC(make_np(tensor), dataformats)
    return Summary(value=[Summary.Value(tag=tag, image=make_image(_to_uint8(arr), rescale))])


def image_boxes(
    tag: str,
    tensor_image: Any,
    tensor_boxes: Any,
    rescale: float = 1,
    dataformats: str = "CHW",
    labels: Any = None,
) -> Summary:
    """A ``Summary`` holding an image with boxes ``(xmin, ymin, xmax, ymax)`` drawn in red.

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import image_boxes
        >>> s = image_boxes("b", np.zeros((3, 8, 8)), np.array([[1, 1, 6, 6]]))
        >>> s.value[0].image.width
        8
    """
    arr = convert_to_HWC(make_np(tensor_image), dataformats)
    boxes = make_np(tensor_boxes)
    picture = make_image(_to_uint8(arr), rescale=rescale, rois=boxes, labels=labels)
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def figure_to_image(figures: Any, close: bool = True) -> np.ndarray:
    """A matplotlib figure rendered as a ``(3, H, W)`` uint8 array (a list of figures as
    ``(N, 3, H, W)``), closed afterwards unless ``close`` is False. Needs matplotlib.

    Example:
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import matplotlib.pyplot as plt
        >>> from ember.utils.tensorboard.summary import figure_to_image
        >>> figure_to_image(plt.figure(figsize=(2, 1), dpi=10)).shape
        (3, 10, 20)
    """
    # Deferred: matplotlib is needed only for figures.
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure) -> np.ndarray:
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        rgba = np.asarray(canvas.buffer_rgba())
        if close:
            plt.close(figure)
        return np.ascontiguousarray(rgba[:, :, :3].transpose(2, 0, 1))

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)


# -- audio, text, layouts -------------------------------------------------------------------


def _video_frames(video: np.ndarray) -> np.ndarray:
    """``(N, T, C, H, W)`` videos as ``(T, H', W', C)`` frames: the batch tiled into a grid
    (padded with black videos to a power of two; rows a power of two too), as torch does."""
    n, t, c, h, w = video.shape
    if video.dtype == np.uint8:
        video = np.float32(video) / 255.0
    if n & (n - 1):  # not a power of two
        padding = np.zeros((2 ** n.bit_length() - n, t, c, h, w))
        video = np.concatenate((video, padding), axis=0)
    rows = 2 ** ((n.bit_length() - 1) // 2)
    cols = video.shape[0] // rows
    video = video.reshape(rows, cols, t, c, h, w).transpose(2, 0, 4, 1, 5, 3)
    return video.reshape(t, rows * h, cols * w, c)


def video(tag: str, tensor: Any, fps: float = 4) -> Summary:
    """A ``Summary`` holding ``(N, T, C, H, W)`` videos as one animated GIF (``fps``
    frames per second, looping), the batch in a grid: uint8 values as they are, others in
    ``[0, 1]``. torch encodes with moviepy; ember with Pillow (GIF's palette of 256 colours
    per frame either way). Needs Pillow.

    Example:
        >>> import ember
        >>> from ember.utils.tensorboard.summary import video
        >>> im = video("v", ember.zeros(1, 3, 3, 8, 8)).value[0].image
        >>> im.height, im.width, im.colorspace, im.encoded_image_string[:3]
        (8, 8, 3, b'GIF')
    """
    # Deferred: Pillow is needed only for images.
    from PIL import Image

    frames = (_video_frames(make_np(tensor)).astype(np.float32) * 255).clip(0, 255)
    frames = frames.astype(np.uint8)
    _t, height, width, channels = frames.shape
    pictures = [Image.fromarray(f[..., 0] if channels == 1 else f) for f in frames]
    with io.BytesIO() as out:
        pictures[0].save(
            out,
            format="GIF",
            save_all=True,
            append_images=pictures[1:],
            duration=int(round(1000 / fps)),
            loop=0,
        )
        gif = out.getvalue()
    picture = Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=gif
    )
    return Summary(value=[Summary.Value(tag=tag, image=picture)])


def audio(tag: str, tensor: Any, sample_rate: int = 44100) -> Summary:
    """A ``Summary`` holding mono sound in ``[-1, 1]`` as 16-bit WAV (louder values are
    clipped, with torch's printed warning).

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import audio
        >>> a = audio("beep", np.zeros((1, 100)), sample_rate=8000).value[0].audio
        >>> a.length_frames, a.content_type
        (100, 'audio/wav')
    """
    # Deferred: only sound needs the wave module.
    import wave

    arr = make_np(tensor).squeeze()
    if abs(arr).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        arr = arr.clip(-1, 1)
    if arr.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    samples = (arr * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as out:
        with wave.open(out, "wb") as wav:
            wav.setnchannels(1)
            wav.setsampwidth(2)
            wav.setframerate(sample_rate)
            wav.writeframes(samples.tobytes())
        data = out.getvalue()
    sound = Summary.Audio(
        sample_rate=sample_rate,
        num_channels=1,
        length_frames=samples.shape[-1],
        encoded_audio_string=data,
        content_type="audio/wav",
    )
    return Summary(value=[Summary.Value(tag=tag, audio=sound)])


def text(tag: str, text: str) -> Summary:
    """A ``Summary`` holding a (Markdown) string for the text plugin, under the tag
    ``<tag>/text_summary`` as torch writes it.

    Example:
        >>> from ember.utils.tensorboard.summary import text
        >>> v = text("notes", "hello").value[0]
        >>> v.tag, v.tensor.string_val[0], v.metadata.plugin_data.plugin_name
        ('notes/text_summary', b'hello', 'text')
    """
    meta = _plugin_metadata("text", TextPluginData(version=0).SerializeToString())
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[text.encode(encoding="utf_8")],
        tensor_shape=_shape_proto([1]),
    )
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])


def custom_scalars(layout: dict) -> Summary:
    """The layout ``{category: {chart: ["Multiline" | "Margin", tags]}}`` of the custom
    scalars plugin (a margin chart takes three tags: value, lower, upper).

    Example:
        >>> from tensorboard.plugins.custom_scalar import layout_pb2
        >>> from ember.utils.tensorboard.summary import custom_scalars
        >>> v = custom_scalars({"loss": {"both": ["Multiline", ["a", "b"]]}}).value[0]
        >>> chart = layout_pb2.Layout.FromString(v.tensor.string_val[0]).category[0].chart[0]
        >>> chart.title, list(chart.multiline.tag)
        ('both', ['a', 'b'])
    """
    categories = []
    for category, charts in layout.items():
        protos = []
        for title, (kind, tags) in charts.items():
            if kind == "Margin":
                if len(tags) != 3:
                    raise AssertionError("len(tags) != 3")
                series = layout_pb2.MarginChartContent.Series(
                    value=tags[0], lower=tags[1], upper=tags[2]
                )
                margin = layout_pb2.MarginChartContent(series=[series])
                protos.append(layout_pb2.Chart(title=title, margin=margin))
            else:
                lines = layout_pb2.MultilineChartContent(tag=tags)
                protos.append(layout_pb2.Chart(title=title, multiline=lines))
        categories.append(layout_pb2.Category(title=category, chart=protos))
    proto = TensorProto(
        dtype="DT_STRING",
        string_val=[layout_pb2.Layout(category=categories).SerializeToString()],
        tensor_shape=TensorShapeProto(),
    )
    value = Summary.Value(
        tag="custom_scalars__config__", tensor=proto, metadata=_plugin_metadata("custom_scalars")
    )
    return Summary(value=[value])


# -- hyperparameters ------------------------------------------------------------------------


def _hparams_summary(tag: str, **content) -> Summary:
    # Deferred with the other hparams pieces: only add_hparams needs them.
    from tensorboard.plugins.hparams.metadata import PLUGIN_DATA_VERSION, PLUGIN_NAME
    from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData

    data = HParamsPluginData(version=PLUGIN_DATA_VERSION, **content)
    meta = _plugin_metadata(PLUGIN_NAME, data.SerializeToString())
    return Summary(value=[Summary.Value(tag=tag, metadata=meta)])


def hparams(
    hparam_dict: dict | None = None,
    metric_dict: dict | None = None,
    hparam_domain_discrete: dict | None = None,
) -> tuple:
    """The three summaries of the hparams plugin: the experiment (hyperparameter names and
    types, metric names), the session start (the values) and the session end (success).

    Values are numbers (bool is a number, as in torch, whose test for numbers comes first),
    strings, one-element tensors, or None (left out); ``hparam_domain_discrete`` lists the
    values a hyperparameter can take.

    Example:
        >>> from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
        >>> from ember.utils.tensorboard.summary import hparams
        >>> exp, ssi, sei = hparams({"lr": 0.1, "opt": "adam"}, {"acc": 0.9})
        >>> data = HParamsPluginData.FromString(ssi.value[0].metadata.plugin_data.content)
        >>> data.session_start_info.hparams["opt"].string_value
        'adam'
    """
    # Deferred: only add_hparams needs the hparams plugin's protos.
    from tensorboard.plugins.hparams.api_pb2 import (
        DataType,
        Experiment,
        HParamInfo,
        MetricInfo,
        MetricName,
        Status,
    )
    from tensorboard.plugins.hparams.metadata import (
        EXPERIMENT_TAG,
        SESSION_END_INFO_TAG,
        SESSION_START_INFO_TAG,
    )
    from tensorboard.plugins.hparams.plugin_data_pb2 import SessionEndInfo, SessionStartInfo

    if not isinstance(hparam_dict, dict):
        raise TypeError("parameter: hparam_dict should be a dictionary, nothing logged.")
    if not isinstance(metric_dict, dict):
        raise TypeError("parameter: metric_dict should be a dictionary, nothing logged.")
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (
            k not in hparam_dict
            or not isinstance(v, list)
            or not all(isinstance(d, type(hparam_dict[k])) for d in v)
        ):
            raise TypeError(
                f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                f"hparam_dict[{k}]."
            )

    infos, ssi = [], SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        if isinstance(v, (int, float)):
            field, kind = "number_value", "DATA_TYPE_FLOAT64"
            ssi.hparams[k].number_value = v
        elif isinstance(v, str):
            field, kind = "string_value", "DATA_TYPE_STRING"
            ssi.hparams[k].string_value = v
        elif isinstance(v, Tensor):
            ssi.hparams[k].number_value = make_np(v).reshape(-1)[0]
            infos.append(HParamInfo(name=k, type=DataType.Value("DATA_TYPE_FLOAT64")))
            continue
        else:
            raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")
        domain = None
        if k in domains:
            domain = struct_pb2.ListValue(
                values=[struct_pb2.Value(**{field: d}) for d in domains[k]]
            )
        infos.append(HParamInfo(name=k, type=DataType.Value(kind), domain_discrete=domain))

    metrics = [MetricInfo(name=MetricName(tag=k)) for k in metric_dict]
    exp = _hparams_summary(
        EXPERIMENT_TAG, experiment=Experiment(hparam_infos=infos, metric_infos=metrics)
    )
    start = _hparams_summary(SESSION_START_INFO_TAG, session_start_info=ssi)
    end = _hparams_summary(
        SESSION_END_INFO_TAG,
        session_end_info=SessionEndInfo(status=Status.Value("STATUS_SUCCESS")),
    )
    return exp, start, end


# -- precision-recall curves -------------------------------------------------------------------


def _pr_summary(tag: str, data: np.ndarray, num_thresholds: int) -> Summary:
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    proto = TensorProto(
        dtype="DT_FLOAT",
        float_val=data.reshape(-1).tolist(),
        tensor_shape=_shape_proto(data.shape),
    )
    meta = _plugin_metadata("pr_curves", content)
    return Summary(value=[Summary.Value(tag=tag, metadata=meta, tensor=proto)])


def compute_curve(
    labels: np.ndarray,
    predictions: np.ndarray,
    num_thresholds: int = 127,
    weights: Any = None,
) -> np.ndarray:
    """The ``(6, num_thresholds)`` rows TP, FP, TN, FN, precision, recall of binary
    ``labels`` against ``predictions`` in ``[0, 1]``, threshold by threshold.

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import compute_curve
        >>> c = compute_curve(np.array([1, 0]), np.array([0.9, 0.1]), num_thresholds=3)
        >>> c[0].tolist(), c[1].tolist()
        ([1.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    """
    minimum = 1e-7
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    truth = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_hist, _ = np.histogram(buckets, bins=num_thresholds, range=span, weights=truth * weights)
    fp_hist, _ = np.histogram(
        buckets, bins=num_thresholds, range=span, weights=(1.0 - truth) * weights
    )
    # A threshold counts every prediction at or above it: reversed cumulative sums.
    tp = np.cumsum(tp_hist[::-1])[::-1]
    fp = np.cumsum(fp_hist[::-1])[::-1]
    tn = fp[0] - fp
    fn = tp[0] - tp
    precision = tp / np.maximum(minimum, tp + fp)
    recall = tp / np.maximum(minimum, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def pr_curve(
    tag: str, labels: Any, predictions: Any, num_thresholds: int = 127, weights: Any = None
) -> Summary:
    """A ``Summary`` holding the precision-recall curve of ``predictions`` against binary
    ``labels`` (at most 127 thresholds, as torch caps them).

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import pr_curve
        >>> s = pr_curve("pr", np.array([1, 0, 1]), np.array([0.8, 0.3, 0.6]), num_thresholds=5)
        >>> [d.size for d in s.value[0].tensor.tensor_shape.dim]
        [6, 5]
    """
    num_thresholds = min(num_thresholds, 127)
    data = compute_curve(
        make_np(labels), make_np(predictions), num_thresholds=num_thresholds, weights=weights
    )
    return _pr_summary(tag, data, num_thresholds)


def pr_curve_raw(
    tag: str,
    tp: Any,
    fp: Any,
    tn: Any,
    fn: Any,
    precision: Any,
    recall: Any,
    num_thresholds: int = 127,
    weights: Any = None,
) -> Summary:
    """A ``Summary`` holding a precision-recall curve given by its six rows of counts.

    Example:
        >>> from ember.utils.tensorboard.summary import pr_curve_raw
        >>> s = pr_curve_raw("pr", [2, 1], [1, 0], [0, 1], [0, 1], [0.7, 1.0], [1.0, 0.5], 2)
        >>> len(s.value[0].tensor.float_val)
        12
    """
    num_thresholds = min(num_thresholds, 127)
    rows = [_array(r) for r in (tp, fp, tn, fn, precision, recall)]
    return _pr_summary(tag, np.stack(rows), num_thresholds)


# -- meshes ----------------------------------------------------------------------------------


def mesh(
    tag: str,
    vertices: Any,
    colors: Any,
    faces: Any,
    config_dict: dict | None,
    display_name: str | None = None,
    description: str | None = None,
) -> Summary:
    """A ``Summary`` holding a mesh or point cloud for the mesh plugin: ``(B, N, 3)``
    vertices, and optionally colors and faces of the same layout.

    Example:
        >>> import numpy as np
        >>> from ember.utils.tensorboard.summary import mesh
        >>> s = mesh("m", np.zeros((1, 4, 3)), None, np.array([[[0, 1, 2]]]), None)
        >>> [v.tag for v in s.value]
        ['m_VERTEX', 'm_FACE']
    """
    # Deferred: only meshes need the mesh plugin's pieces.
    from tensorboard.plugins.mesh import metadata
    from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData

    config = json.dumps(config_dict, sort_keys=True) if config_dict is not None else "{}"
    parts = [
        (vertices, MeshPluginData.VERTEX),
        (faces, MeshPluginData.FACE),
        (colors, MeshPluginData.COLOR),
    ]
    parts = [(make_np(t), kind) for t, kind in parts if t is not None]
    components = metadata.get_components_bitmask([kind for _, kind in parts])
    values = []
    for arr, kind in parts:
        meta = metadata.create_summary_metadata(
            tag, display_name, kind, components, arr.shape, description, json_config=config
        )
        proto = TensorProto(
            dtype="DT_FLOAT",
            float_val=arr.reshape(-1).astype(np.float64).tolist(),
            tensor_shape=_shape_proto(arr.shape),
        )
        values.append(
            Summary.Value(tag=metadata.get_instance_name(tag, kind), tensor=proto, metadata=meta)
        )
    return Summary(value=values)


# -- the graph --------------------------------------------------------------------------------


def onnx_graph(path: Any) -> GraphDef:
    """The graph of an ONNX file as TensorBoard's ``GraphDef``, read as torch reads it: the
    graph's inputs and outputs as ``Variable`` nodes (dtype and shape), then one node per
    ONNX node, named by its first output, its attributes as text. Needs ``onnx``.

    Example:
        >>> import tempfile, ember
        >>> from ember.utils.tensorboard.summary import onnx_graph
        >>> path = tempfile.mkdtemp() + "/m.onnx"
        >>> ember.onnx.export(ember.nn.Linear(2, 1), (ember.ones(1, 2),), path)
        >>> [n.op for n in onnx_graph(path).node][-1]
        'Gemm'
    """
    # Deferred: onnx is an optional package (the onnx extra).
    import onnx

    graph_proto = onnx.load(path).graph
    nodes = []
    for value in [*graph_proto.input, *graph_proto.output]:
        tensor_type = value.type.tensor_type
        dims = [TensorShapeProto.Dim(size=d.dim_value) for d in tensor_type.shape.dim]
        nodes.append(
            NodeDef(
                name=value.name,
                op="Variable",
                input=[],
                attr={
                    "dtype": AttrValue(type=tensor_type.elem_type),
                    "shape": AttrValue(shape=TensorShapeProto(dim=dims)),
                },
            )
        )
    for node in graph_proto.node:
        attributes = ", ".join(
            " = ".join(str(field[1]) for field in a.ListFields()) for a in node.attribute
        )
        nodes.append(
            NodeDef(
                name=node.output[0],
                op=node.op_type,
                input=node.input,
                attr={"parameters": AttrValue(s=attributes.encode())},
            )
        )
    return GraphDef(node=nodes, versions=VersionDef(producer=22))


def _tensors(obj: Any) -> Iterator[Tensor]:
    """The tensors in a (nested) tuple, list or dict, in order."""
    if isinstance(obj, Tensor):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _tensors(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item)


def _snake(name: str) -> str:
    """``"NativeLayerNorm"`` -> ``"native_layer_norm"``, ``"MaxPool2DWithIndices"`` ->
    ``"max_pool2d_with_indices"``: backward-node names are aten op names in CamelCase."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z][a-z])|(?<=[a-z])(?=[A-Z])", "_", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return name.lower()


# A backward node's saved arguments are its ``_saved_<name>`` attributes (as in torch, and
# as ember.viz reads them).
_SAVED_PREFIX = "_saved_"


def _attributes(fn: Any) -> str:
    """The node's plain saved arguments (dims, sizes, flags...) written as torch writes a
    node's attributes (a dict, quotes blanked), e.g. ``{ dim : 1}``."""
    found = {}
    for attr in dir(fn):
        if not attr.startswith(_SAVED_PREFIX):
            continue
        value = getattr(fn, attr, None)
        plain = isinstance(value, (bool, int, float, str)) or (
            isinstance(value, tuple) and all(isinstance(v, (bool, int, float)) for v in value)
        )
        if plain:
            found[attr[len(_SAVED_PREFIX) :]] = value
    return str(found).replace("'", " ")


def _node_def(name: str, op: str, inputs: list, shapes: list, attributes: str) -> NodeDef:
    attr = {"attr": AttrValue(s=attributes.encode("utf_8"))}
    attr["_output_shapes"] = AttrValue(
        list=AttrValue.ListValue(shape=[_shape_proto(s) for s in shapes])
    )
    return NodeDef(name=name, op=op, input=inputs, attr=attr)


class _ScopeRecorder:
    """Labels each backward node recorded while a module runs with that module's scope
    (``Net/Sequential[seq]/Linear[1]``), the innermost module winning.

    A module's nodes are those reachable from its outputs without passing through its
    inputs; its forward hook runs after those of the modules it calls, so their nodes are
    labelled first and keep their label.
    """

    def __init__(self, model: Any) -> None:
        root = type(model).__name__
        self.scopes: dict = {}
        self.param_names: dict = {}
        for path, module in model.named_modules():
            if id(module) in self.scopes:
                continue  # a shared module keeps its first name
            if path:
                parent, _, attr = path.rpartition(".")
                parent_scope = self.scopes.get(id(model.get_submodule(parent)), root)
                self.scopes[id(module)] = f"{parent_scope}/{type(module).__name__}[{attr}]"
            else:
                self.scopes[id(module)] = root
        for path, param in model.named_parameters():
            owner, _, attr = path.rpartition(".")
            scope = self.scopes[id(model.get_submodule(owner))] if owner else root
            self.param_names[id(param)] = f"{scope}/{attr}"
        self.root = root
        self.labels: dict = {}  # id(node) -> scope
        self.keep: list = []  # the labelled nodes, alive while their ids are keys
        self.calls: list = []  # per module call in progress: ids of its inputs' nodes
        self.handles: list = []
        for module in model.modules():
            self.handles.append(module.register_forward_pre_hook(self.enter, with_kwargs=True))
            self.handles.append(module.register_forward_hook(self.leave, with_kwargs=True))

    def enter(self, module: Any, args: tuple, kwargs: dict) -> None:
        self.calls.append(
            {id(t.grad_fn) for t in _tensors((args, kwargs)) if t.grad_fn is not None}
        )

    def leave(self, module: Any, args: tuple, kwargs: dict, output: Any) -> None:
        stops = self.calls.pop()
        scope = self.scopes.get(id(module), self.root)
        todo = [t.grad_fn for t in _tensors(output) if t.grad_fn is not None]
        seen: set = set()
        while todo:
            fn = todo.pop()
            if fn is None or id(fn) in stops or id(fn) in seen or isinstance(fn, AccumulateGrad):
                continue
            seen.add(id(fn))
            if id(fn) not in self.labels:
                self.labels[id(fn)] = scope
                self.keep.append(fn)
            todo.extend(u for u, _ in fn.next_functions)

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _input_names(model: Any, count: int) -> list:
    """Names for the model's positional inputs: its ``forward``'s parameter names (as
    torch's trace names them), ``input.<i>`` where there are none."""
    try:
        params = [
            p.name
            for p in inspect.signature(model.forward).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"input.{i + 1}" for i in range(count)]


def graph(
    model: Any, args: Any = None, verbose: bool = False, use_strict_trace: bool = True
) -> tuple:
    """The ``GraphDef`` of ``model`` run on ``args`` (a tensor or a tuple/list of them), and
    the ``RunMetadata`` torch writes with it.

    ember runs the model once (in eval mode, recording autograd with the inputs made to
    require grad) and walks the backward graph of the outputs (``grad_fn`` and
    ``next_functions``): each backward node becomes an op named after the aten op it
    differentiates (``AddmmBackward0`` -> ``aten::addmm``) inside the scope of the innermost
    module that ran it (``Net/Linear[fc]/addmm``), each parameter a ``prim::GetAttr`` node
    in its module's scope (``Net/Linear[fc]/weight``), with the inputs ``input/<name>`` and
    outputs ``output/output.<i>`` as in torch. Every node carries its output shapes
    (``_output_shapes``) and its plain saved arguments (``attr``). Ops that record no
    gradient (integer results, ops under ``no_grad``) are not in the graph.
    ``use_strict_trace`` is accepted for torch's signature; there is no tracer to pass it to.

    Example:
        >>> import ember
        >>> from ember.utils.tensorboard.summary import graph
        >>> gdef, _ = graph(ember.nn.Linear(3, 2), ember.ones(4, 3))
        >>> [(n.name, n.op) for n in gdef.node]  # doctest: +NORMALIZE_WHITESPACE
        [('input/input', 'IO Node'), ('Linear/bias', 'prim::GetAttr'),
         ('Linear/weight', 'prim::GetAttr'), ('Linear/t', 'aten::t'),
         ('Linear/addmm', 'aten::addmm'), ('output/output.1', 'IO Node')]
    """
    if args is None:
        args = ()
    elif isinstance(args, Tensor):
        args = (args,)
    elif isinstance(args, list):
        args = tuple(args)
    elif not isinstance(args, tuple):
        args = (args,)

    # Inputs requiring grad make every op on them recorded; a clone (not the leaf itself)
    # is passed so that in-place ops in the model (ReLU(inplace=True)) stay legal.
    sources: dict = {}  # id(node) -> name, for the nodes standing for inputs
    names = _input_names(model, len(args))
    inputs, input_nodes = [], []
    for name, a in zip(names, args):
        if isinstance(a, Tensor) and (a.is_floating_point() or a.is_complex()):
            clone = a.detach().requires_grad_(True).clone()
            sources[id(clone.grad_fn)] = f"input/{name}"
            input_nodes.append((f"input/{name}", clone.grad_fn, tuple(a.shape)))
            inputs.append(clone)
        else:
            if isinstance(a, Tensor):
                input_nodes.append((f"input/{name}", None, tuple(a.shape)))
            inputs.append(a)

    recorder = _ScopeRecorder(model)
    training = model.training
    model.train(False)
    try:
        with enable_grad():
            result = model(*inputs)
    finally:
        model.train(training)
        recorder.remove()
    outputs = list(_tensors(result))

    # Every backward node behind the outputs, inputs first (a depth-first post-order).
    order, seen = [], set()
    for out in outputs:
        if out.grad_fn is None or id(out.grad_fn) in seen or id(out.grad_fn) in sources:
            continue
        stack = [(out.grad_fn, iter(out.grad_fn.next_functions))]
        seen.add(id(out.grad_fn))
        while stack:
            fn, it = stack[-1]
            for u, _ in it:
                if u is not None and id(u) not in seen and id(u) not in sources:
                    seen.add(id(u))
                    stack.append((u, iter(u.next_functions)))
                    break
            else:
                stack.pop()
                order.append(fn)

    node_names = dict(sources)
    used: set = set(node_names.values())

    def unique(base: str) -> str:
        name, i = base, 0
        while name in used:
            i += 1
            name = f"{base}.{i}"
        used.add(name)
        return name

    nodes = [_node_def(n, "IO Node", [], [shape], "") for n, _, shape in input_nodes]
    for fn in order:
        if isinstance(fn, AccumulateGrad):
            var = fn.variable
            base = recorder.param_names.get(id(var), f"{recorder.root}/tensor")
            attr = base.rpartition("/")[2]
            node_names[id(fn)] = unique(base)
            nodes.append(
                _node_def(
                    node_names[id(fn)],
                    "prim::GetAttr" if id(var) in recorder.param_names else "prim::Constant",
                    [],
                    [tuple(var.shape)],
                    str({"name": attr}).replace("'", " "),
                )
            )
            continue
        # the aten op the node differentiates, without the overload number (SumBackward1)
        op = _snake(fn.name().partition("Backward")[0])
        scope = recorder.labels.get(id(fn), recorder.root)
        node_names[id(fn)] = unique(f"{scope}/{op}")
        edges = [
            node_names[id(u)] + (f":{k}" if k else "")
            for u, k in fn.next_functions
            if u is not None and id(u) in node_names
        ]
        shapes = [shape for shape, _ in getattr(fn, "_meta", ())]
        nodes.append(_node_def(node_names[id(fn)], f"aten::{op}", edges, shapes, _attributes(fn)))

    for i, out in enumerate(outputs):
        if out.grad_fn is not None and id(out.grad_fn) in node_names:
            src = [node_names[id(out.grad_fn)] + (f":{out.output_nr}" if out.output_nr else "")]
        else:
            src = []
        nodes.append(_node_def(f"output/output.{i + 1}", "IO Node", src, [tuple(out.shape)], ""))

    if verbose:
        for node in nodes:
            shapes = [[d.size for d in s.dim] for s in node.attr["_output_shapes"].list.shape]
            print(f"{node.name} = {node.op}({', '.join(node.input)})  # {shapes}")
    # torch marks the graph as run on the CPU, and TensorBoard's graph plugin expects this
    # producer version (reverse-engineered by torch from TensorFlow's logs).
    stats = RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")]))
    return GraphDef(node=nodes, versions=VersionDef(producer=22)), stats
