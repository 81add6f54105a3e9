"""LoRA from peft on a tiny Llama: base weights and a LoRA adapter made by torch (B set
nonzero, as after training), loaded by ember with PeftModel.from_pretrained; outputs with and
without the adapter, the loss, the LoRA parameters' gradients, an AdamW step,
merge_and_unload, a fresh get_peft_model (B zero: the base model's outputs), and ember's own
adapter save/load round trip."""
# requires: peft transformers safetensors

import torch
from oracle_io import finish, record, record_grads, under_torch, weights
from peft import LoraConfig, PeftModel, get_peft_model
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


def lora_config() -> LoraConfig:
    return LoraConfig(
        r=4,
        lora_alpha=8,
        target_modules=["q_proj", "v_proj", "down_proj"],
        lora_dropout=0.0,
        task_type="CAUSAL_LM",
    )


def base() -> LlamaForCausalLM:
    return LlamaForCausalLM.from_pretrained(weights("llama"))


if under_torch():
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(weights("llama"))
    trained = get_peft_model(base(), lora_config())
    with torch.no_grad():  # as after some training: B no longer zero
        for name, param in trained.named_parameters():
            if "lora_B" in name:
                param.normal_(0.0, 0.2)
    trained.save_pretrained(weights("adapter"))

ids = torch.tensor([[1, 17, 42, 3, 99, 60, 64, 12], [1, 8, 8, 51, 7, 30, 11, 4]])

# a fresh adapter: B is zero, so the model computes the base model's outputs
fresh = get_peft_model(base(), lora_config())
trainable, total = fresh.get_nb_trainable_parameters()
record("fresh.trainable_total", [trainable, total])
record("fresh.lora_B_zero", all(not p.any() for n, p in fresh.named_parameters() if "lora_B" in n))
record("fresh.logits", fresh(ids).logits)

# PiSSA: A and B from the base weight's top singular triplets (linalg.svd), or from the
# randomized svd_lowrank (its projection is each library's own random draw, so only what
# does not depend on it is compared: the base weight minus B A plus B A, i.e. the outputs)
for init in ("pissa", "pissa_niter_4"):
    pissa = get_peft_model(
        base(),
        LoraConfig(
            r=4, lora_alpha=8, target_modules=["q_proj"], lora_dropout=0.0, init_lora_weights=init
        ),
    )
    record(f"{init}.logits", pissa(ids).logits, rtol=1e-3, atol=1e-4)
    q = pissa.base_model.model.model.layers[0].self_attn.q_proj
    if init == "pissa":  # the top-4 part of the SVD: determined (distinct singular values)
        record("pissa.BA", q.lora_B["default"].weight @ q.lora_A["default"].weight, atol=1e-4)
    with torch.no_grad():
        merged_q = q.base_layer.weight + q.scaling["default"] * (
            q.lora_B["default"].weight @ q.lora_A["default"].weight
        )
    original = base().model.layers[0].self_attn.q_proj.weight
    record(f"{init}.reconstructs", torch.allclose(merged_q, original, atol=1e-5))

# the adapter made by torch
model = PeftModel.from_pretrained(base(), weights("adapter"), is_trainable=True)
trainable_names = [n for n, p in model.named_parameters() if p.requires_grad]
record("trainable_count", len(trainable_names))
record("trainable_all_lora", all("lora_" in n for n in trainable_names))
with model.disable_adapter():
    record("base.logits", model(ids).logits)
out = model(ids, labels=ids)
out.loss.backward()
record("loss", out.loss)
record("logits", out.logits)
record_grads("grad", model, rtol=1e-3, atol=1e-6)
frozen = [p for p in model.parameters() if not p.requires_grad]
record("frozen_without_grad", all(p.grad is None for p in frozen))
torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2).step()
model.eval()
with torch.no_grad():
    adapted = model(ids).logits
record("after_step.logits", adapted)

# the program's own adapter round trip, in whichever library it runs under
model.save_pretrained(weights(f"adapter-{torch.__name__}"))
again = PeftModel.from_pretrained(base(), weights(f"adapter-{torch.__name__}"))
saved = {n: p for n, p in model.named_parameters() if "lora_" in n}
loaded = {n: p for n, p in again.named_parameters() if "lora_" in n}
record(
    "round_trip_equal",
    saved.keys() == loaded.keys() and all(torch.equal(saved[n], loaded[n]) for n in saved),
)

# the adapter merged into the base weights
merged = model.merge_and_unload()
with torch.no_grad():
    merged_logits = merged(ids).logits
record("merged.logits", merged_logits)
record("merged.matches_adapted", torch.allclose(merged_logits, adapted, atol=1e-5))
record("merged.q_proj", merged.model.layers[0].self_attn.q_proj.weight)
record("merged.plain_linear", type(merged.model.layers[0].self_attn.q_proj) is torch.nn.Linear)
finish()
