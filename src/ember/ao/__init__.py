"""``torch.ao``: torch's architecture-optimization family. ember has no quantized tensors;
``torch.ao.quantization`` holds only the stubs that float models carry before they are
quantized (torchvision's quantizable models build on them).

Example:
    >>> import ember.ao.quantization
    >>> ember.ao.quantization.QuantStub()
    QuantStub()
"""
