"""``torch.utils.model_zoo``: ``load_url`` is ``hub.load_state_dict_from_url`` (refused:
ember makes no network requests)."""

from ..hub import load_state_dict_from_url as load_url  # noqa: F401
from ..hub import tqdm  # noqa: F401  (torch's module exports it too)
