"""linalg ops (in progress)."""
