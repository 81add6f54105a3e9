"""Utilities: ``ember.utils.data`` (datasets, samplers, the DataLoader) and
``ember.utils.checkpoint`` (activation checkpointing)."""

from . import _pytree, checkpoint, data

__all__ = ["checkpoint", "data"]
