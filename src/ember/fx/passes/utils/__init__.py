"""Helpers of fx passes: ``matcher_utils`` (finding a pattern graph in a graph).

Example:
    >>> from ember.fx.passes.utils import matcher_utils
    >>> matcher_utils.InternalMatch.__name__
    'InternalMatch'
"""

from . import matcher_utils

__all__ = ["matcher_utils"]
