"""shape ops (in progress)."""
