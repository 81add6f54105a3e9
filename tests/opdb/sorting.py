"""Sorting and selection ops (sort, topk, kthvalue, repeat_interleave, index_fill, addcmul)."""

OPS: list = []
