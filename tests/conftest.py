"""Shared fixtures. Torch and NumPy share the process in some tests: keep OpenMP passive
(torch's spinning worker threads otherwise slow small NumPy calls many times over)."""

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
