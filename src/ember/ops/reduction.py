"""reduction ops (in progress)."""
