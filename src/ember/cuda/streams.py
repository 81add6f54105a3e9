"""``torch.cuda.streams``: a CPU build cannot make streams or events."""

from . import Event, Stream  # noqa: F401
