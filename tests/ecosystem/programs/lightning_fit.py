"""A small LightningModule trained by lightning's Trainer for two epochs on the CPU (no
shuffling, so both runs see the same batches), then validated; the final weights, the
validation loss, and a checkpoint save / load_from_checkpoint round trip."""
# requires: lightning

import lightning as L
import torch
from oracle_io import finish, record, save_or_load, weights
from torch.utils.data import DataLoader, TensorDataset


class Regressor(L.LightningModule):
    def __init__(self, hidden: int = 8, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(4, hidden), torch.nn.Tanh(), torch.nn.Linear(hidden, 1)
        )

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("val_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)


gen = torch.Generator().manual_seed(0)
x = torch.linspace(-1.0, 1.0, 64).reshape(16, 4)
y = (x.sum(dim=1, keepdim=True) * 0.5 + 0.1).sin()
train = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=False)
val = DataLoader(TensorDataset(x[:8], y[:8]), batch_size=4, shuffle=False)

torch.manual_seed(0)
model = save_or_load(Regressor(), "regressor.pt")
trainer = L.Trainer(
    max_epochs=2,
    accelerator="cpu",
    devices=1,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
    deterministic=True,
)
trainer.fit(model, train, val)
for name, value in model.state_dict().items():
    record(f"weights.{name}", value)
record("global_step", trainer.global_step)
(metrics,) = trainer.validate(model, val, verbose=False)
record("val_loss", metrics["val_loss"])
record("callback_val_loss", trainer.callback_metrics["val_loss"])

# the checkpoint round trip, in whichever library the program runs under
path = weights(f"regressor-{torch.__name__}.ckpt")
trainer.save_checkpoint(path)
again = Regressor.load_from_checkpoint(path)
record("ckpt_hparams", [again.hparams.hidden, again.hparams.lr])
record(
    "ckpt_equal",
    all(
        torch.equal(a, b) for a, b in zip(model.state_dict().values(), again.state_dict().values())
    ),
)
record("ckpt_prediction", again(x[:3]))
finish()
