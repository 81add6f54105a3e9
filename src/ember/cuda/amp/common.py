"""``torch.cuda.amp.common``."""


def amp_definitely_not_available() -> bool:
    """True: there is no CUDA for autocast to use."""
    return True
