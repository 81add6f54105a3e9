"""timm and torchvision models: a ResNet-18, a small ViT and an EfficientNet-B0 from timm,
torchvision's ResNet-18, with weights made by torch; outputs, gradients, a step of timm's
LAMB optimizer, and torchvision's tensor transforms and its Python roi_align."""
# requires: timm torchvision

import torch
from oracle_io import (
    finish,
    record,
    record_grads,
    save_or_load,
    shared_tensor,
    use_vision_packages,
)

use_vision_packages()

import timm  # noqa: E402
import timm.optim  # noqa: E402
import torchvision  # noqa: E402
from torchvision.transforms import v2  # noqa: E402

torch.manual_seed(0)
# batch 4 of 64x64: the last BatchNorm then normalises 16 values per channel (with 2 values
# its output is ill-conditioned, and float32 rounding decides it)
images = shared_tensor("images", lambda: torch.rand(4, 3, 64, 64))
labels = torch.tensor([3, 7, 0, 9])
models = {
    "resnet18": timm.create_model("resnet18", num_classes=10),
    "vit": timm.create_model(
        "vit_tiny_patch16_224", img_size=64, patch_size=16, depth=2, num_classes=10
    ),
    # no dropout before the classifier: its random mask is each library's own draw
    "efficientnet": timm.create_model("efficientnet_b0", num_classes=10, drop_rate=0.0),
    "tv_resnet18": torchvision.models.resnet18(num_classes=10),
}
for name, model in models.items():
    save_or_load(model, f"{name}.pt")
    model.eval()
    with torch.no_grad():
        record(f"{name}.eval_logits", model(images), atol=1e-4)
    # gradients in float64: a ReLU input within float32 rounding of 0 flips its mask (and
    # one gradient element) between any two float32 implementations
    model.double().train()
    loss = torch.nn.functional.cross_entropy(model(images.double()), labels)
    loss.backward()
    record(f"{name}.loss", loss, rtol=1e-9, atol=0.0)
    record_grads(f"{name}.grad", model, rtol=1e-7, atol=1e-10)

# timm's own optimizer (LAMB) on the ViT's gradients
vit = models["vit"]
optimizer = timm.optim.create_optimizer_v2(vit, opt="lamb", lr=1e-2, weight_decay=0.05)
optimizer.step()
for pname, param in vit.named_parameters():
    if pname.startswith(("patch_embed", "head", "cls_token")):
        record(f"vit.after_lamb.{pname}", param, rtol=1e-7, atol=1e-10)

# torchvision's tensor transforms, and roi_align by its Python code (ops not loaded)
transform = v2.Compose(
    [
        v2.Resize((24, 24), antialias=True),
        v2.CenterCrop(20),
        v2.Normalize(mean=[0.5, 0.4, 0.3], std=[0.2, 0.3, 0.4]),
    ]
)
record("transforms", transform(images), atol=1e-5)
boxes = torch.tensor([[0, 2.0, 2.0, 40.0, 36.0], [3, 0.0, 9.5, 63.0, 60.0]])
features = images.clone().requires_grad_()
pooled = torchvision.ops.roi_align(
    features, boxes, output_size=(4, 4), spatial_scale=0.5, sampling_ratio=2, aligned=True
)
pooled.sum().backward()
record("roi_align", pooled, atol=1e-6)
record("roi_align.grad", features.grad, atol=1e-6)
finish()
