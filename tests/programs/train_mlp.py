"""A PyTorch training script as people write it: the usual imports, a Dataset, a DataLoader,
an nn.Module, an optimizer and a scheduler. Deterministic without a seed (weights and data
come from formulas), so that torch and ember print the same numbers."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, Dataset


class Waves(Dataset):
    def __init__(self, n):
        x = torch.linspace(-2.0, 2.0, n).unsqueeze(1)
        self.x = torch.cat([x, x**2, torch.sin(3 * x)], dim=1)
        self.y = (x[:, 0] > 0).long() + (x[:, 0] > 1).long()

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 16)
        self.fc2 = nn.Linear(16, 3)
        with torch.no_grad():
            for p in self.parameters():
                k = torch.arange(p.numel(), dtype=torch.float32)
                p.copy_((0.3 * torch.cos(k * 1.7 + p.numel())).reshape(p.shape))

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


loader = DataLoader(Waves(64), batch_size=16, shuffle=False)
model = Net()
opt = torch.optim.Adam(model.parameters(), lr=0.05)
sched = StepLR(opt, step_size=2, gamma=0.5)
for epoch in range(4):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    print(f"epoch {epoch} loss {total / len(loader):.5f} lr {sched.get_last_lr()[0]:.4f}")

with torch.no_grad():
    x, y = loader.dataset.x, loader.dataset.y
    acc = (model(x).argmax(1) == y).float().mean().item()
print(f"accuracy {acc:.4f}")
print(type(model.fc1.weight).__name__, model.fc1.weight.dtype, tuple(model.fc1.weight.shape))
print(math.isclose(sum(p.detach().abs().sum().item() for p in model.parameters()), 0) is False)
