"""Training with PyTorch (the `train` extra); serving never imports this package."""
