"""``torch.backends.mps``: Apple's Metal backend is never available to ember."""


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
