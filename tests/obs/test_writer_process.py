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
from corrige.obs.writer import StoreWriterProcess, chunks


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


def test_a_backlog_is_sent_in_chunks_that_keep_each_trace_whole():
    traces = [_trace() for _ in range(700)]  # 3 spans each
    records = [span for trace in traces for span in trace]
    pieces = chunks(records, size=100)
    assert [span for piece in pieces for span in piece] == records  # nothing lost, nothing repeated
    assert all(100 <= len(piece) <= 125 for piece in pieces[:-1])
    for before, after in zip(pieces, pieces[1:], strict=False):
        assert before[-1].trace_id != after[0].trace_id  # no trace split over two writes


def _rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads RSS from /proc")
def test_ever_larger_backlogs_do_not_ratchet_the_writer_memory(tmp_path):
    """Batches pile up on a busy machine; written whole, each larger one left the child's RSS that
    much higher for good (about 2 MB per 1,000 spans). In chunks its peak is one chunk's."""
    writer = StoreWriterProcess(tmp_path / "traces.sqlite", max_spans=20_000)
    try:
        writer.write([span for _ in range(1000) for span in _trace()])
        settled = _rss(writer._process.pid)
        for n in (2000, 4000, 6000):
            writer.write([span for _ in range(n) for span in _trace()])
        grown = _rss(writer._process.pid) - settled
    finally:
        writer.close()
    assert grown < 3_000_000, f"the writer's RSS grew {grown / 1e6:.1f} MB over larger batches"
