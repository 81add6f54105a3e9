"""Differential tests: random programs over the op database, run by ember and by torch."""
