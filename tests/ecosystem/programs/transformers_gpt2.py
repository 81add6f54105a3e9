"""A tiny GPT-2 from transformers: save_pretrained by torch, from_pretrained by ember, a
training step with AdamW, greedy generate, and ember's own save/load round trip."""
# requires: transformers safetensors

import torch
from oracle_io import finish, record, record_grads, under_torch, weights
from transformers import GPT2Config, GPT2LMHeadModel

config = GPT2Config(
    n_layer=2, n_head=2, n_embd=32, vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=1
)
if under_torch():
    torch.manual_seed(0)
    GPT2LMHeadModel(config).save_pretrained(weights("gpt2"))
model = GPT2LMHeadModel.from_pretrained(weights("gpt2"))

ids = torch.tensor([[5, 17, 42, 3, 99, 0, 64, 12], [8, 8, 2, 51, 7, 30, 11, 4]])
model.eval()
generated = model.generate(ids[:1], max_new_tokens=8, do_sample=False, pad_token_id=1)
record("generated", generated)

model.train()
model.config.resid_pdrop = model.config.embd_pdrop = model.config.attn_pdrop = 0.0
for module in model.modules():
    if isinstance(module, torch.nn.Dropout):
        module.p = 0.0
out = model(ids, labels=ids)
out.loss.backward()
record("loss", out.loss)
record("logits", out.logits)
record_grads("grad", model, rtol=1e-3, atol=1e-5)
torch.optim.AdamW(model.parameters(), lr=1e-3).step()
record("after_step", model(ids, labels=ids).loss)

# the program's own round trip, in whichever library it runs under
model.save_pretrained(weights(f"gpt2-{torch.__name__}"))
again = GPT2LMHeadModel.from_pretrained(weights(f"gpt2-{torch.__name__}"))
record(
    "round_trip_equal",
    all(
        torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values())
    ),
)
finish()
