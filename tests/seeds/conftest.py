"""Seed tests: make the shared ``replay`` helper importable whatever pytest's import mode."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
