"""``torch.onnx.symbolic_opset11``: torch's TorchScript exporter's translations of aten ops
at opset 11, which custom symbolic functions call. ember exports ONNX from its own graphs
(``ember.onnx.export``) and has no TorchScript graphs for such functions to build on: the
module exists so that libraries registering custom symbolics (torchvision) import; using a
translation raises AttributeError.

Example:
    >>> import ember.onnx.symbolic_opset11 as opset11
    >>> hasattr(opset11, "unsqueeze")
    False
"""

__all__: list = []
