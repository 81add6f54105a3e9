"""torchmetrics over fixed data: classification (Accuracy, F1Score, AUROC) and regression
(MeanSquaredError) metrics, a MetricCollection, update/compute/reset over batches, and the
functional forms."""
# requires: torchmetrics

import torch
import torchmetrics
import torchmetrics.functional as TF
from oracle_io import finish, record
from torchmetrics import MetricCollection
from torchmetrics.classification import (
    BinaryAccuracy,
    BinaryAUROC,
    MulticlassAccuracy,
    MulticlassF1Score,
)

probs = torch.tensor([0.1, 0.9, 0.35, 0.8, 0.65, 0.2, 0.55, 0.4, 0.7, 0.05, 0.95, 0.3])
target = torch.tensor([0, 1, 0, 1, 0, 0, 1, 1, 1, 0, 1, 0])
logits = torch.tensor(
    [
        [2.0, 0.5, -1.0],
        [0.1, 1.5, 0.3],
        [-0.5, 0.2, 2.2],
        [1.0, 1.1, 0.9],
        [0.3, -0.2, 0.1],
        [2.5, 0.0, 0.4],
        [-1.0, 0.5, 0.7],
        [0.2, 2.0, -0.3],
    ]
)
labels = torch.tensor([0, 1, 2, 1, 0, 0, 2, 2])
preds_r = torch.tensor([2.5, 0.0, 2.1, 7.8, -1.2, 3.3])
target_r = torch.tensor([3.0, -0.5, 2.0, 8.0, -1.0, 3.0])

# metrics accumulated over batches, then computed and reset
acc = torchmetrics.Accuracy(task="binary")
auroc = BinaryAUROC()
for lo in range(0, 12, 4):
    record(f"batch_acc.{lo}", acc(probs[lo : lo + 4], target[lo : lo + 4]))
    auroc.update(probs[lo : lo + 4], target[lo : lo + 4])
record("acc", acc.compute())
record("auroc", auroc.compute())
acc.reset()
acc.update(probs[:6], target[:6])
record("acc_after_reset", acc.compute())

f1_macro = torchmetrics.F1Score(task="multiclass", num_classes=3, average="macro")
f1_none = MulticlassF1Score(num_classes=3, average=None)
for lo in (0, 4):
    f1_macro.update(logits[lo : lo + 4], labels[lo : lo + 4])
    f1_none.update(logits[lo : lo + 4], labels[lo : lo + 4])
record("f1_macro", f1_macro.compute())
record("f1_per_class", f1_none.compute())
record("auroc_multiclass", torchmetrics.AUROC(task="multiclass", num_classes=3)(logits, labels))

mse = torchmetrics.MeanSquaredError()
for lo in (0, 3):
    mse.update(preds_r[lo : lo + 3], target_r[lo : lo + 3])
record("mse", mse.compute())
record("rmse", torchmetrics.MeanSquaredError(squared=False)(preds_r, target_r))

collection = MetricCollection(
    {
        "acc": MulticlassAccuracy(num_classes=3),
        "acc_micro": MulticlassAccuracy(num_classes=3, average="micro"),
        "f1": MulticlassF1Score(num_classes=3, average="weighted"),
    }
)
for lo in (0, 4):
    collection.update(logits[lo : lo + 4], labels[lo : lo + 4])
for name, value in sorted(collection.compute().items()):
    record(f"collection.{name}", value)
collection.reset()
record("collection_forward.acc", collection(logits[:4], labels[:4])["acc"])

# the functional forms
record("fn.accuracy", TF.accuracy(probs, target, task="binary"))
record("fn.f1", TF.f1_score(logits, labels, task="multiclass", num_classes=3))
record("fn.auroc", TF.auroc(probs, target, task="binary"))
record("fn.mse", TF.mean_squared_error(preds_r, target_r))
record("fn.mae", TF.mean_absolute_error(preds_r, target_r))
record("fn.r2", TF.r2_score(preds_r, target_r))
record("fn.confusion", TF.confusion_matrix(logits, labels, task="multiclass", num_classes=3))
record("fn.binary_accuracy", BinaryAccuracy(threshold=0.6)(probs, target))
finish()
