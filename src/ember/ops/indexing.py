"""indexing ops (in progress)."""
