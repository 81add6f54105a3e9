"""Version checks as libraries write them."""

import torch
from packaging import version

print(version.parse(torch.__version__) >= version.parse("2.0"))
print(version.parse(torch.__version__).release[:2] == (2, 13))
print(torch.__version__ >= "2.0", torch.__version__ < "3", torch.__version__ >= (2, 1))
print(str(torch.__version__).split("+")[0])
print(torch.version.cuda, torch.cuda.is_available())
major, minor = (int(v) for v in torch.__version__.split(".")[:2])
print(major >= 2 and minor >= 1)
