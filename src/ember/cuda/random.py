"""``torch.cuda.random``: seeding without CUDA is a no-op; RNG state needs a device."""

from . import get_rng_state, manual_seed, manual_seed_all, seed, seed_all, set_rng_state  # noqa: F401
