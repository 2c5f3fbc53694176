import numpy as np
import pytest

from corrige.engine.kv_cache import SlotPool
from corrige.model import preset


def test_allocates_lowest_first_and_counts_usage():
    pool = SlotPool(preset("tiny"), 4)
    assert [pool.allocate(f"r{i}") for i in range(3)] == [0, 1, 2]
    pool.free(1)
    assert (pool.num_used, pool.num_free, pool.usage) == (2, 2, 0.5)
    assert pool.allocate("r3") == 1
    assert pool.owner(1) == "r3"


def test_refuses_to_overallocate_or_double_free():
    pool = SlotPool(preset("tiny"), 1)
    slot = pool.allocate("a")
    with pytest.raises(RuntimeError, match="no free KV slot"):
        pool.allocate("b")
    pool.free(slot)
    with pytest.raises(RuntimeError, match="freed twice"):
        pool.free(slot)


def test_swap_moves_contents_and_owners():
    pool = SlotPool(preset("tiny"), 3)
    a, b = pool.allocate("a"), pool.allocate("b")
    pool.cache.k[:, a] = 1.0
    pool.cache.k[:, b] = 2.0
    pool.swap(a, b)
    assert (pool.owner(a), pool.owner(b)) == ("b", "a")
    assert np.all(pool.cache.k[:, a] == 2.0) and np.all(pool.cache.k[:, b] == 1.0)
    pool.swap(b, 2)  # into a free slot: the old one becomes free
    assert (pool.owner(2), pool.owner(b), pool.num_free) == ("a", None, 1)
    assert np.all(pool.cache.k[:, 2] == 1.0)
    assert pool.allocate("c") == b


def test_swap_of_the_positions_in_use_moves_those_and_leaves_the_rest():
    pool = SlotPool(preset("tiny"), 3)
    a, b = pool.allocate("a"), pool.allocate("b")
    k, v = pool.cache.k, pool.cache.v
    k[:, a], v[:, a] = 1.0, 1.0
    k[:, b], v[:, b] = 2.0, 2.0
    pool.swap(a, b, 5)  # both owned: the first 5 positions exchange
    assert np.all(k[:, a, :, :, :5] == 2.0) and np.all(v[:, a, :, :5] == 2.0)
    assert np.all(k[:, b, :, :, :5] == 1.0) and np.all(v[:, b, :, :5] == 1.0)
    assert np.all(k[:, a, :, :, 5:] == 1.0) and np.all(v[:, b, :, 5:] == 2.0)  # beyond: not copied
    pool.swap(b, 2, 3)  # into a free slot
    assert pool.owner(2) == "a" and np.all(k[:, 2, :, :, :3] == 1.0) and np.all(v[:, 2, :, :3] == 1.0)
    pool.swap(2, b, 10_000)  # more than the window: the whole window
    assert pool.owner(b) == "a" and np.all(k[:, b] == k[:, 2])
