"""``torch.fx.passes``: graph passes. ember has the subgraph matcher
(``passes.utils.matcher_utils``) that ``fx.subgraph_rewriter`` uses.

Example:
    >>> from ember.fx.passes.utils.matcher_utils import SubgraphMatcher
    >>> SubgraphMatcher.__name__
    'SubgraphMatcher'
"""

from . import utils

__all__ = ["utils"]
