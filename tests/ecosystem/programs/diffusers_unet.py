"""A tiny UNet2DModel from diffusers: save_pretrained by torch, from_pretrained by ember; a
DDPM training step (add_noise, forward, MSE loss, backward, AdamW), a few DDIM sampling
steps from noise made under torch and passed through a file, and ember's own save/load
round trip."""
# requires: diffusers safetensors

import torch
import torch.nn.functional as F
from diffusers import DDIMScheduler, DDPMScheduler, UNet2DModel
from oracle_io import finish, record, record_grads, under_torch, weights

config = dict(
    sample_size=8,
    in_channels=3,
    out_channels=3,
    layers_per_block=1,
    block_out_channels=(8, 16),
    norm_num_groups=4,
    attention_head_dim=4,
    down_block_types=("DownBlock2D", "AttnDownBlock2D"),
    up_block_types=("AttnUpBlock2D", "UpBlock2D"),
)
if under_torch():
    torch.manual_seed(0)
    UNet2DModel(**config).save_pretrained(weights("unet"))
    # every random tensor the program uses, made once by torch
    torch.save(
        {
            "clean": torch.randn(2, 3, 8, 8),
            "noise": torch.randn(2, 3, 8, 8),
            "start": torch.randn(1, 3, 8, 8),
        },
        weights("tensors.pt"),
    )
# (low_cpu_mem_usage=False: build the model, then load; ember has no "meta" device for
# accelerate's empty-weights initialisation)
model = UNet2DModel.from_pretrained(weights("unet"), low_cpu_mem_usage=False)
tensors = torch.load(weights("tensors.pt"), weights_only=True)

# a DDPM training step
train_scheduler = DDPMScheduler(num_train_timesteps=100)
timesteps = torch.tensor([10, 73])
noisy = train_scheduler.add_noise(tensors["clean"], tensors["noise"], timesteps)
record("noisy", noisy)
model.train()
prediction = model(noisy, timesteps).sample
loss = F.mse_loss(prediction, tensors["noise"])
loss.backward()
record("prediction", prediction)
record("loss", loss)
record_grads("grad", model, rtol=1e-3, atol=1e-5)
torch.optim.AdamW(model.parameters(), lr=1e-3).step()
record("after_step", F.mse_loss(model(noisy, timesteps).sample, tensors["noise"]))

# DDIM sampling (eta=0: deterministic) from the saved noise
model.eval()
sampler = DDIMScheduler(num_train_timesteps=100)
sampler.set_timesteps(4)
record("sampling_timesteps", sampler.timesteps)
sample = tensors["start"]
with torch.no_grad():
    for i, t in enumerate(sampler.timesteps):
        sample = sampler.step(model(sample, t).sample, t, sample).prev_sample
        record(f"sample_{i}", sample, rtol=1e-3, atol=1e-4)

# the program's own round trip, in whichever library it runs under
model.save_pretrained(weights(f"unet-{torch.__name__}"))
again = UNet2DModel.from_pretrained(weights(f"unet-{torch.__name__}"), low_cpu_mem_usage=False)
record(
    "round_trip_equal",
    all(
        torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values())
    ),
)
finish()
