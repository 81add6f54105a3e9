"""nn.functional ops: layers, activations, pooling, normalization, losses."""

OPS: list = []
