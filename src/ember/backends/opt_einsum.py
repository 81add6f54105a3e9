"""``torch.backends.opt_einsum``: contraction-order flags (ember lets NumPy choose)."""

enabled = True
strategy = "auto"


def is_available() -> bool:
    """False: ember's einsum uses NumPy's own path optimisation, not opt_einsum."""
    return False


def get_opt_einsum():
    return None
