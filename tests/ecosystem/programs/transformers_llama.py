"""A tiny Llama from transformers with grouped-query attention and rotary embeddings:
weights by torch, both attention implementations (eager and sdpa), a padded batch with its
attention mask, a training step, and greedy and cached generation."""
# requires: transformers safetensors

import torch
from oracle_io import finish, record, record_grads, under_torch, weights
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(
    vocab_size=128,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
    bos_token_id=1,
    eos_token_id=2,
    pad_token_id=0,
)
if under_torch():
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(weights("llama"))

ids = torch.tensor([[1, 17, 42, 3, 99, 60, 64, 12], [0, 0, 1, 51, 7, 30, 11, 4]])
mask = (ids != 0).long()
for implementation in ("eager", "sdpa"):
    model = LlamaForCausalLM.from_pretrained(weights("llama"), attn_implementation=implementation)
    labels = ids.masked_fill(mask == 0, -100)
    out = model(ids, attention_mask=mask, labels=labels)
    out.loss.backward()
    record(f"{implementation}.loss", out.loss)
    record(f"{implementation}.logits", out.logits.masked_fill(mask[..., None] == 0, 0.0))
    record_grads(f"{implementation}.grad", model, rtol=1e-3, atol=1e-5)

model.eval()
with torch.no_grad():
    greedy = model.generate(ids[:1], max_new_tokens=10, do_sample=False, use_cache=True)
    uncached = model.generate(ids[:1], max_new_tokens=10, do_sample=False, use_cache=False)
    padded = model.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False)
record("generate.cached", greedy)
record("generate.uncached", uncached)
record("generate.left_padded", padded)
finish()
