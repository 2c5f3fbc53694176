"""Incremental decoding for streams, settings from the environment, and the `serve` command."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from corrige.engine import EngineConfig, Policy
from corrige.server.settings import Settings
from corrige.server.sse import IncrementalDecoder, event
from corrige.tokenizer import BPETokenizer


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return BPETokenizer.train(["pasado irregular: goed → went. Él habla inglés."] * 3, vocab_size=300, min_frequency=1)


def test_incremental_decoding_releases_only_whole_characters(tokenizer):
    text = "goed → went, él"
    ids = tokenizer.encode(text)
    byte_ids = [i for t in "→é" for i in tokenizer.encode(t)]
    assert len(byte_ids) > 2  # multi-byte characters span several byte tokens here
    decoder = IncrementalDecoder(tokenizer)
    pieces = [decoder.push(i) for i in ids] + [decoder.flush()]
    assert "".join(pieces) == text
    assert all("\ufffd" not in piece for piece in pieces)


def test_incremental_decoding_flushes_an_unfinished_character(tokenizer):
    arrow = tokenizer.encode("→")
    decoder = IncrementalDecoder(tokenizer)
    assert decoder.push(arrow[0]) == ""  # the first byte of three: nothing to show yet
    assert decoder.flush() == "\ufffd"


def test_sse_events_are_framed_and_json_encoded():
    assert event({"a": "é"}, "token") == 'event: token\ndata: {"a":"é"}\n\n'.encode()
    assert event('{"raw":1}') == b'data: {"raw":1}\n\n'


def test_settings_come_from_corrige_variables(monkeypatch):
    monkeypatch.setenv("CORRIGE_RATE_LIMIT", "0")
    monkeypatch.setenv("CORRIGE_BATCHING", "static")
    monkeypatch.setenv("CORRIGE_MAX_BATCH", "8")
    monkeypatch.setenv("CORRIGE_MODEL_DIR", "/tmp/some-model")
    settings = Settings()
    assert settings.rate_limit == 0 and settings.batching is Policy.STATIC and settings.max_batch == 8
    assert settings.model_dir == Path("/tmp/some-model")
    config = settings.engine_config()
    assert config.policy is Policy.STATIC and config.max_batch == 8


def test_the_servers_engine_defaults_are_the_engines(monkeypatch):
    """One source of defaults: `Engine(weights)` in a notebook runs what `corrige serve` runs."""
    import os

    for name in [n for n in os.environ if n.startswith("CORRIGE_")]:
        monkeypatch.delenv(name)
    assert Settings().engine_config() == EngineConfig()
    assert EngineConfig().speculative_tokens > 0 and EngineConfig().queue_timeout_s is not None


def test_by_default_the_server_batches_half_its_kv_slots(monkeypatch):
    import os

    for name in [n for n in os.environ if n.startswith("CORRIGE_")]:
        monkeypatch.delenv(name)
    settings = Settings()
    assert settings.max_batch == 32 and settings.batch_limit == 32 and settings.n_slots == 64
    assert settings.engine_config().batch_capacity == 32
    assert Settings(max_batch=0).batch_limit == Settings(max_batch=0).engine_config().batch_capacity == 64
    assert Settings(max_batch=16).batch_limit == Settings(max_batch=16).engine_config().batch_capacity == 16


def test_bad_settings_are_refused(monkeypatch):
    monkeypatch.setenv("CORRIGE_RATE_LIMIT", "-1")
    with pytest.raises(ValueError, match="rate_limit"):
        Settings()


def test_serve_options_override_the_environment(monkeypatch, model_dir):
    from corrige import cli
    from corrige.server import runner

    seen = []
    monkeypatch.setattr(runner, "serve", seen.append)
    monkeypatch.setenv("CORRIGE_PORT", "9999")
    monkeypatch.setenv("CORRIGE_MAX_WAITING", "7")
    args = ["serve", "--batching", "threads", "--port", "8123", "--max-batch", "4", "--rate-limit", "0"]
    args += ["--threads", "2", "--model", str(model_dir)]
    result = CliRunner().invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    assert "http://127.0.0.1:8123" in result.output
    (settings,) = seen
    assert (settings.batching, settings.port, settings.max_batch, settings.rate_limit) == ("threads", 8123, 4, 0)
    assert settings.max_waiting == 7 and settings.n_threads == 2  # from the environment, and an option


def test_serve_without_a_model_says_so_and_exits_2(tmp_path):
    from corrige import cli

    result = CliRunner().invoke(cli.app, ["serve", "--model", str(tmp_path)])
    assert result.exit_code == 2
    assert "no model in" in result.output


def test_serve_refuses_an_unknown_batching_policy():
    from corrige import cli

    result = CliRunner().invoke(cli.app, ["serve", "--batching", "dynamic"])
    assert result.exit_code == 2  # a usage error, before anything starts
    assert "batching" in result.output and "'dynamic'" in result.output
    assert "'none', 'threads', 'static' or 'continuous'" in result.output  # what it takes


def test_the_gil_switch_interval_follows_the_settings(make_settings):
    import sys

    from fastapi.testclient import TestClient

    from corrige.server.app import create_app

    before = sys.getswitchinterval()
    try:
        with TestClient(create_app(make_settings(gil_switch_ms=2.0))):
            assert sys.getswitchinterval() == 0.002
    finally:
        sys.setswitchinterval(before)
