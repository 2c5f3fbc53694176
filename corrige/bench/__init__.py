"""Benchmarks: every figure is a median over interleaved repetitions, with ratios taken in one run."""
