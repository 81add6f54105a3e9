"""accelerate on one CPU process: Accelerator(cpu=True) prepares a small model, its SGD
optimizer and a DataLoader; training with gradient accumulation, clip_grad_norm_, gather,
and unwrap_model; then a save_state/load_state round trip (model, optimizer with its
momentum, and the Python, NumPy and torch RNG states), after which training continues
exactly as it did from the saved point."""
# requires: accelerate

import random

import numpy as np
import torch
from accelerate import Accelerator
from oracle_io import RUNNER, WORKDIR, finish, record, record_grads, save_or_load
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
model = save_or_load(
    torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)), "mlp.pt"
)
xs = torch.linspace(-1.0, 1.0, 32).reshape(8, 4)
ys = torch.stack([xs.sum(1), (xs * xs).mean(1)], dim=1)
loader = DataLoader(TensorDataset(xs, ys), batch_size=2, shuffle=False)

accelerator = Accelerator(cpu=True, gradient_accumulation_steps=2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
record("num_processes", accelerator.num_processes)
record("is_main", accelerator.is_main_process)

losses, synced = [], []
for _epoch in range(2):
    for x, y in loader:
        with accelerator.accumulate(model):
            loss = torch.nn.functional.mse_loss(model(x), y)
            accelerator.backward(loss)
            synced.append(accelerator.sync_gradients)
            if accelerator.sync_gradients:
                record(f"norm{len(losses)}", accelerator.clip_grad_norm_(model.parameters(), 0.5))
            optimizer.step()
            optimizer.zero_grad()
        losses.append(accelerator.gather(loss.detach()))
record("losses", torch.stack(losses))
record("synced", synced)

x, y = next(iter(loader))
loss = torch.nn.functional.mse_loss(model(x), y)
accelerator.backward(loss)
record_grads("grad", accelerator.unwrap_model(model))
record("gathered", accelerator.gather(model(x)))
optimizer.zero_grad()

unwrapped = accelerator.unwrap_model(model)
for name, value in unwrapped.state_dict().items():
    record(f"final.{name}", value)

record("after", unwrapped(xs))

# save_state/load_state: accelerate torch.saves the RNG states (NumPy's is a tuple holding a
# uint32 ndarray) and loads them with torch.load(weights_only=True) after allowlisting NumPy's
# globals. The model and optimizer go through torch.save too (safe_serialization=False: the
# safetensors package's torch loader needs torch.UntypedStorage.from_file, which ember lacks).
state_dir = WORKDIR / f"accelerate_state_{RUNNER}"  # each runner its own checkpoint
batch = next(iter(loader))  # (iterating a DataLoader draws from torch's generator)
accelerator.save_state(str(state_dir), safe_serialization=False)


def step_and_draw():
    """One optimizer step on ``batch`` (SGD with momentum, so the optimizer state matters),
    then a draw from each random generator that save_state records."""
    x, y = batch
    loss = torch.nn.functional.mse_loss(model(x), y)
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
    weights = {k: v.detach().clone() for k, v in unwrapped.state_dict().items()}
    draws = (random.random(), np.random.rand(3), torch.rand(3))
    return loss.detach(), weights, draws


loss_a, weights_a, draws_a = step_and_draw()  # training goes on from the saved point...
step_and_draw()  # ...and further, so that restoring has something to undo
accelerator.load_state(str(state_dir))
loss_b, weights_b, draws_b = step_and_draw()  # ...and again after restoring it

record("resumed.loss", loss_b)
for name, value in weights_b.items():
    record(f"resumed.{name}", value)
record("resumed.same_loss", bool(torch.equal(loss_a, loss_b)))
record("resumed.same_weights", all(torch.equal(weights_a[k], weights_b[k]) for k in weights_a))
record("resumed.same_python_rng", draws_a[0] == draws_b[0])
record("resumed.same_numpy_rng", bool(np.array_equal(draws_a[1], draws_b[1])))
record("resumed.same_torch_rng", bool(torch.equal(draws_a[2], draws_b[2])))
record("resumed.step", accelerator.step)

# The torch run's checkpoint (under ember: files real torch wrote, NumPy's RNG state among
# them) resumes training where the torch run was. Python's and NumPy's generators are seeded
# per process, so their draws after restoring are compared with the torch run's. (torch's own
# generator state is left out: ember's generator is not torch's, and accelerate skips the
# rest of its RNG restore quietly when torch.set_rng_state refuses the state.)
step_and_draw()
accelerator.load_state(str(WORKDIR / "accelerate_state_torch"))
loss_c, weights_c, draws_c = step_and_draw()
record("from_torch.loss", loss_c)
for name, value in weights_c.items():
    record(f"from_torch.{name}", value)
record("from_torch.python_draw", draws_c[0])
record("from_torch.numpy_draws", draws_c[1])
finish()
