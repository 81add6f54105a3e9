"""``torch.utils.tensorboard`` for ember: ``SummaryWriter`` logs scalars, histograms, images,
text, hyperparameters, graphs and embeddings for TensorBoard.

Needs the ``tensorboard`` package (``pip install 'ember[tensorboard]'``); like torch's, this
module is imported explicitly and raises ImportError without it. ``import ember`` does not
import it.

Example:
    >>> import tempfile
    >>> import ember
    >>> from ember.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp()) as writer:
    ...     writer.add_scalar("loss", ember.tensor(0.5), global_step=0)
"""

from __future__ import annotations

import re

_HINT = "(install ember's tensorboard extra: pip install -e '.[tensorboard]' in ember's checkout)"
_MESSAGE = "TensorBoard logging requires TensorBoard version 1.15 or above"


def _check_tensorboard() -> None:
    """Raise torch's ImportError (with the extra to install) unless tensorboard >= 1.15
    can be imported."""
    try:
        import tensorboard
    except ImportError as e:
        raise ImportError(f"{_MESSAGE} {_HINT}") from e
    numbers = [int(n) for n in re.findall(r"\d+", getattr(tensorboard, "__version__", ""))[:2]]
    if len(numbers) < 2 or tuple(numbers) < (1, 15):
        raise ImportError(f"{_MESSAGE} {_HINT}")


_check_tensorboard()

from tensorboard.summary.writer.record_writer import RecordWriter

from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]
