"""Shared fixtures for the synthetic data tests: one small corpus per session, since generating
it is the slow part."""

import pytest

from corrige.synth.data import make_splits


@pytest.fixture(scope="session")
def splits():
    return make_splits(data_seed=7, n_train=4000, n_dev=600, n_test=600)
