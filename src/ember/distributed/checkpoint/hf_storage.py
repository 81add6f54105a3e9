"""``torch.distributed.checkpoint.hf_storage``: reading and writing distributed checkpoints
as Hugging Face safetensors files. ember does not implement distributed checkpointing."""

from __future__ import annotations

__all__ = ["HuggingFaceStorageReader", "HuggingFaceStorageWriter"]

_MSG = "ember does not implement distributed checkpointing (torch.distributed.checkpoint)"


class HuggingFaceStorageReader:
    """Reads a distributed checkpoint from safetensors files (not implemented by ember).

    Example:
        >>> from ember.distributed.checkpoint.hf_storage import HuggingFaceStorageReader
        >>> try:
        ...     HuggingFaceStorageReader("/tmp/ckpt")
        ... except NotImplementedError:
        ...     print("no")
        no
    """

    def __init__(self, path: str, *args, **kwargs) -> None:
        raise NotImplementedError(_MSG)


class HuggingFaceStorageWriter:
    """Writes a distributed checkpoint as safetensors files (not implemented by ember).

    Example:
        >>> from ember.distributed.checkpoint.hf_storage import HuggingFaceStorageWriter
        >>> try:
        ...     HuggingFaceStorageWriter("/tmp/ckpt")
        ... except NotImplementedError:
        ...     print("no")
        no
    """

    def __init__(self, path: str, *args, **kwargs) -> None:
        raise NotImplementedError(_MSG)
