"""``torch.distributed.constants``: the default timeout of process-group operations
(``init_process_group(timeout=None)`` waits this long), which libraries import to pass on.

Example:
    >>> from ember.distributed.constants import default_pg_timeout
    >>> default_pg_timeout
    datetime.timedelta(seconds=1800)
"""

from datetime import timedelta

__all__ = ["default_pg_nccl_timeout", "default_pg_timeout"]

default_pg_timeout = timedelta(minutes=30)
# NCCL's own default applies to NCCL groups (there are none on a CPU build)
default_pg_nccl_timeout = None
