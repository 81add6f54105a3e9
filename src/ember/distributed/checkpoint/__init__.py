"""``torch.distributed.checkpoint``: distributed checkpoints. ember has the Hugging Face
storage classes that libraries import; it does not implement distributed checkpointing."""
