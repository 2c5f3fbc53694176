"""The deployment's settings, the per-replica metrics listener, the Ray Serve config file, and the
single-process server's independence from Ray (none of these start Ray)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from corrige.cluster.metrics_port import start_metrics_listener
from corrige.cluster.replica import ReplicaPlan
from corrige.server.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def test_single_process_server_never_imports_ray() -> None:
    """Importing the server, building its app and `corrige serve --help` leave Ray unloaded."""
    code = (
        "import sys\n"
        "import corrige.server, corrige.server.app, corrige.server.runner\n"
        "from corrige.server.app import create_app\n"
        "from corrige.server.settings import Settings\n"
        "create_app(Settings())\n"
        "from typer.testing import CliRunner\n"
        "from corrige.cli import app\n"
        "result = CliRunner().invoke(app, ['serve', '--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert '--replicas' in result.output\n"
        "names = ('ray', 'ray.', 'corrige.cluster')\n"
        "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith(names[1:])))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_max_ongoing_requests_is_the_engines_bound() -> None:
    settings = Settings(max_batch=16, max_waiting=100, drain_grace_s=7)
    plan = ReplicaPlan.from_settings(settings, replicas=3)
    options = plan.deployment_options()
    assert options["max_ongoing_requests"] == 16 + 100
    assert options["num_replicas"] == 3 and "autoscaling_config" not in options
    assert options["graceful_shutdown_timeout_s"] == pytest.approx(12.0)
    assert options["health_check_period_s"] > 0 and options["health_check_timeout_s"] > 0


def test_autoscaling_bounds() -> None:
    plan = ReplicaPlan.from_settings(Settings(max_batch=32), replicas=2, max_replicas=5)
    options = plan.deployment_options()
    assert "num_replicas" not in options
    assert options["autoscaling_config"] == {
        "min_replicas": 2,
        "initial_replicas": 2,
        "max_replicas": 5,
        "target_ongoing_requests": 32,
    }


@pytest.mark.parametrize(("replicas", "top"), [(0, None), (3, 2)])
def test_bad_bounds_are_refused(replicas: int, top: int | None) -> None:
    with pytest.raises(ValueError):
        ReplicaPlan.from_settings(Settings(), replicas=replicas, max_replicas=top)


def test_metrics_listener_takes_the_next_free_port() -> None:
    async def scrape(port: int, path: str) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        await writer.drain()
        data = await reader.read()
        writer.close()
        return data

    async def main() -> None:
        from corrige.bench.servers import free_port

        first = free_port()
        one, port_one = await start_metrics_listener(lambda: b"corrige:requests_total 1.0\n", "127.0.0.1", first, 8)
        two, port_two = await start_metrics_listener(lambda: b"corrige:requests_total 2.0\n", "127.0.0.1", first, 8)
        try:
            assert port_one == first and port_two > port_one
            answer = await scrape(port_two, "/metrics")
            assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"corrige:requests_total 2.0\n")
            assert (await scrape(port_one, "/other")).startswith(b"HTTP/1.1 404")
        finally:
            one.close()
            two.close()

    asyncio.run(main())


def test_ray_serve_config_is_valid_and_builds() -> None:
    """deploy/ray/serve.yaml against Ray Serve's own schema, and its application built from it."""
    pytest.importorskip("ray.serve", reason="the cluster extra (ray[serve]) is not installed")
    import yaml
    from ray.serve.schema import ServeDeploySchema

    from corrige.cluster.ray_serve import app_builder

    config = yaml.safe_load((REPO / "deploy" / "ray" / "serve.yaml").read_text())
    ServeDeploySchema.model_validate(config)
    (application,) = config["applications"]
    assert application["import_path"] == "corrige.cluster.ray_serve:app_builder"
    assert app_builder(application["args"]) is not None


def test_every_replica_gets_one_session_key_made_once_by_the_parent(tmp_path, monkeypatch):
    from corrige.cluster.replica import replica_settings

    monkeypatch.delenv("CORRIGE_SESSION_SECRET", raising=False)
    overrides = {"portal_db": str(tmp_path / "portal.sqlite"), "model_dir": tmp_path / "model"}
    first, again = replica_settings(overrides), replica_settings(overrides)
    assert len(first["session_secret"]) >= 32 and first["session_secret"] == again["session_secret"]
    assert (tmp_path / "portal.key.json").is_file()  # kept, as one server keeps it: sessions survive a restart
    assert first["model_dir"] == str(tmp_path / "model")  # as Ray passes it
    assert replica_settings({**overrides, "session_secret": "x" * 40})["session_secret"] == "x" * 40
    monkeypatch.setenv("CORRIGE_SESSION_SECRET", "y" * 40)
    assert "session_secret" not in replica_settings(overrides)  # each replica reads the variable itself
