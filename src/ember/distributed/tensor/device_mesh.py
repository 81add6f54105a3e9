"""``torch.distributed.tensor.device_mesh``: the old home of ``DeviceMesh``."""

from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]
