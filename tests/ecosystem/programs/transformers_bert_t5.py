"""An encoder (BERT: masked LM and sequence classification, weights in torch's pickle format)
and an encoder-decoder (T5: seq2seq loss and greedy generation) from transformers."""
# requires: transformers safetensors

import torch
from oracle_io import finish, record, record_grads, under_torch, weights
from transformers import (
    BertConfig,
    BertForMaskedLM,
    BertForSequenceClassification,
    T5Config,
    T5ForConditionalGeneration,
)

bert_config = BertConfig(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=64,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
    num_labels=3,
)
t5_config = T5Config(
    vocab_size=99,
    d_model=32,
    d_kv=8,
    d_ff=37,
    num_layers=2,
    num_heads=4,
    relative_attention_num_buckets=8,
    dropout_rate=0.0,
    decoder_start_token_id=0,
    pad_token_id=0,
    eos_token_id=1,
)
if under_torch():
    torch.manual_seed(0)
    # pytorch_model.bin: torch's zip pickle, which ember reads with weights_only loading
    BertForMaskedLM(bert_config).save_pretrained(weights("bert-mlm"), safe_serialization=False)
    BertForSequenceClassification(bert_config).save_pretrained(weights("bert-cls"))
    T5ForConditionalGeneration(t5_config).save_pretrained(weights("t5"))

ids = torch.tensor([[2, 17, 42, 3, 98, 60, 64, 12], [2, 51, 7, 30, 11, 4, 0, 0]])
mask = (ids != 0).long()

mlm = BertForMaskedLM.from_pretrained(weights("bert-mlm"))
labels = torch.full_like(ids, -100)
labels[:, 2] = ids[:, 2]
out = mlm(ids.masked_fill(labels != -100, 5), attention_mask=mask, labels=labels)
out.loss.backward()
record("bert.mlm.loss", out.loss)
record("bert.mlm.logits", out.logits)
record_grads("bert.mlm.grad", mlm, rtol=1e-3, atol=1e-5)

classifier = BertForSequenceClassification.from_pretrained(weights("bert-cls"))
out = classifier(ids, attention_mask=mask, labels=torch.tensor([0, 2]))
out.loss.backward()
record("bert.cls.logits", out.logits)
record("bert.cls.pooler_grad", classifier.bert.pooler.dense.weight.grad, rtol=1e-3)

t5 = T5ForConditionalGeneration.from_pretrained(weights("t5"))
target = torch.tensor([[5, 9, 13, 1], [7, 1, 0, 0]])
out = t5(input_ids=ids, attention_mask=mask, labels=target.masked_fill(target == 0, -100))
out.loss.backward()
record("t5.loss", out.loss)
record("t5.logits", out.logits)
record_grads("t5.grad", t5, rtol=1e-3, atol=1e-5)
t5.eval()
with torch.no_grad():
    record("t5.generate", t5.generate(ids, attention_mask=mask, max_new_tokens=6, do_sample=False))
finish()
