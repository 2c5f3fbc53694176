"""The trace store's writes in a child process: committed when `write` returns, nothing lost when
the child dies, a failed batch reported and the writer still working after it."""

from __future__ import annotations

import os
import signal
from dataclasses import replace

import pytest
from obs_support import make_trace, sequential

from corrige.obs import spans as names
from corrige.obs.store import TraceStore
from corrige.obs.writer import StoreWriterProcess


def _trace():
    return make_trace(sequential([(names.VALIDATE, 0.3, {"n": 1, "x": [1.5, "é"]}), (names.DECODE, 2.0)]))


@pytest.fixture
def writer(tmp_path):
    writer = StoreWriterProcess(tmp_path / "traces.sqlite", max_spans=1000)
    yield writer
    writer.close()


def test_spans_are_committed_when_write_returns(writer):
    reader = TraceStore(writer.path)
    first, second = _trace(), _trace()
    writer.write(first)
    assert reader.spans() == first  # another connection sees them at once: committed
    writer.write(second)
    assert reader.spans() == first + second
    assert reader.count_orphans() == 0 and not writer.in_process


def test_when_the_child_dies_the_next_batches_are_written_here(writer):
    reader = TraceStore(writer.path)
    before = _trace()
    writer.write(before)
    os.kill(writer._process.pid, signal.SIGKILL)
    writer._process.join(5)
    after, later = _trace(), _trace()
    writer.write(after)  # the batch handed over as the child is found dead is not lost
    writer.write(later)
    assert writer.in_process
    assert reader.spans() == before + after + later


def test_a_batch_the_child_cannot_write_is_reported_and_the_writer_goes_on(writer):
    (bad,) = make_trace([])
    with pytest.raises(OSError, match="not JSON serializable"):
        writer.write([replace(bad, attributes={"when": {1, 2}})])
    good = _trace()
    writer.write(good)
    assert TraceStore(writer.path).spans() == good and not writer.in_process


def test_close_stops_the_child(tmp_path):
    writer = StoreWriterProcess(tmp_path / "traces.sqlite")
    writer.write(_trace())
    writer.close()
    assert not writer._process.is_alive() and writer._process.exitcode == 0
    assert TraceStore(tmp_path / "traces.sqlite").count() == 3
