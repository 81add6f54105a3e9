"""torchvision's operators that ember computes itself. torchvision's own operators are C++
compiled against torch's core and cannot load into ember (``torch.ops.load_library``
fails, so torchvision runs without them and its Python wrappers such as
``torchvision.ops.nms`` raise torchvision's "Couldn't load custom C++ ops" error); the
operators below are there for code that calls ``torch.ops.torchvision`` directly, and for
torchvision's import, which registers shape functions for them.

Loaded on first use of the ``torchvision`` operator namespace (``ember.library``).

Example:
    >>> import ember
    >>> boxes = ember.tensor([[0.0, 0.0, 2.0, 2.0], [0.1, 0.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0]])
    >>> ember.ops.torchvision.nms(boxes, ember.tensor([0.9, 0.8, 0.7]), 0.5)
    tensor([0, 2])
"""

from __future__ import annotations

import numpy as np

from ._creation import from_numpy
from ._tensor import Tensor
from .library import custom_op


def _keep_by_score(boxes: np.ndarray, scores: np.ndarray, iou_threshold: float) -> np.ndarray:
    """Greedy non-maximum suppression, as torchvision's CPU kernel: visit boxes by
    decreasing score, keep each one not suppressed, and suppress the later boxes whose IoU
    with it exceeds ``iou_threshold``. The kept indices, in visiting order."""
    x1, y1, x2, y2 = (boxes[:, k] for k in range(4))
    areas = (x2 - x1) * (y2 - y1)
    order = np.argsort(-scores, kind="stable")
    suppressed = np.zeros(len(order), dtype=bool)
    keep = []
    for rank, i in enumerate(order):
        if suppressed[rank]:
            continue
        keep.append(i)
        rest = order[rank + 1 :]
        width = np.maximum(0, np.minimum(x2[i], x2[rest]) - np.maximum(x1[i], x1[rest]))
        height = np.maximum(0, np.minimum(y2[i], y2[rest]) - np.maximum(y1[i], y1[rest]))
        inter = width * height
        iou = inter / (areas[i] + areas[rest] - inter)
        suppressed[rank + 1 :] |= iou > iou_threshold
    return np.asarray(keep, dtype=np.int64)


@custom_op("torchvision::nms", mutates_args=())
def nms(dets: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """Indices of the boxes ``dets`` (``(N, 4)``, ``x1, y1, x2, y2``) kept by greedy
    non-maximum suppression, by decreasing ``scores``."""
    if dets.dim() != 2:
        raise RuntimeError(f"boxes should be a 2d tensor, got {dets.dim()}D")
    if dets.size(1) != 4:
        raise RuntimeError(f"boxes should have 4 elements in dimension 1, got {dets.size(1)}")
    if scores.dim() != 1:
        raise RuntimeError(f"scores should be a 1d tensor, got {scores.dim()}")
    if dets.size(0) != scores.size(0):
        raise RuntimeError(
            "boxes and scores should have same number of elements in dimension 0, got "
            f"{dets.size(0)} and {scores.size(0)}"
        )
    if dets.numel() == 0:
        return from_numpy(np.empty(0, dtype=np.int64))
    boxes = dets.detach().numpy()
    return from_numpy(_keep_by_score(boxes, scores.detach().numpy(), float(iou_threshold)))


@custom_op("torchvision::qnms", mutates_args=())
def qnms(dets: Tensor, scores: Tensor, iou_threshold: float) -> Tensor:
    """``nms`` of quantized boxes and scores: ember has no quantized tensors."""
    raise NotImplementedError(
        "torchvision::qnms takes quantized tensors, which ember does not have; use nms"
    )
