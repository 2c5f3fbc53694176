"""Debian's `prometheus` scraping two servers with deploy/prometheus.yml's replica job: the
request counter summed across them, through Prometheus's query API, is both servers' requests.

The two replicas are two plain `corrige serve` processes on two ports (what each replica of
`corrige serve --replicas N` is, minus Ray, whose start would take most of the test budget);
`make test` installs prometheus (`apt-get install prometheus`); the test skips where it cannot."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from corrige.bench.servers import LabServer, free_port
from corrige.tutor.agent import SEED_MODEL

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SENTENCES = ["Yesterday I goed to the store", "She have two cats", "I am agree with you", "He don't like it"]


def own_count(server: LabServer) -> float:
    """The server's own `corrige:requests_total`, summed over its labels, from its /metrics."""
    text = httpx.get(f"{server.url}/metrics", timeout=10.0).text
    lines = [line for line in text.splitlines() if line.startswith("corrige:requests_total{")]
    return sum(float(line.rsplit(" ", 1)[1]) for line in lines)


def query(url: str, expr: str) -> list[dict]:
    body = httpx.get(f"{url}/api/v1/query", params={"query": expr}, timeout=5.0).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.mark.slow
# Ray Serve's replicas are found machine-wide (`replica_pids`) and need the CPUs: alone under -n 2
@pytest.mark.exclusive
def test_prometheus_sums_the_request_counter_over_two_replicas(tmp_path: Path) -> None:
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip("Debian's prometheus is not installed (apt-get install prometheus; `make test` does)")
    # the seed model: the counter is the same on any model, and it starts faster than the bundled reader
    one, two = LabServer.corrige("continuous", SEED_MODEL).start(), LabServer.corrige("continuous", SEED_MODEL).start()
    prometheus = None
    try:
        one.wait_ready()
        two.wait_ready()
        config = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
        config["global"]["scrape_interval"] = "1s"
        config["rule_files"] = [str(DEPLOY / name) for name in config["rule_files"]]  # the alerts load too
        jobs = {job["job_name"]: job for job in config["scrape_configs"]}
        replicas = jobs["corrige-replicas"]
        replicas["static_configs"][0]["targets"] = [f"127.0.0.1:{s.port}" for s in (one, two)]
        config["scrape_configs"] = [replicas]
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
        web = f"127.0.0.1:{free_port()}"
        prometheus = subprocess.Popen(
            [
                binary,
                f"--config.file={tmp_path / 'prometheus.yml'}",
                f"--storage.tsdb.path={tmp_path / 'data'}",
                f"--web.listen-address={web}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=(tmp_path / "prometheus.log").open("wb"),
        )
        url = f"http://{web}"
        with httpx.Client(timeout=30.0) as client:
            for i, server in enumerate([one] * 3 + [two] * 5):
                response = client.post(f"{server.url}/v1/grammar/correct", json={"sentence": SENTENCES[i % 4]})
                assert response.status_code == 200
        counts = {f"127.0.0.1:{s.port}": own_count(s) for s in (one, two)}
        assert sum(counts.values()) >= 8
        summed = per_instance = None
        give_up = time.monotonic() + 60
        while time.monotonic() < give_up:
            try:
                summed = query(url, 'sum(corrige:requests_total{job="corrige-replicas"})')
                per_instance = query(url, "sum by (instance) (corrige:requests_total)")
            except httpx.TransportError:
                summed = None  # not listening yet
            if summed and float(summed[0]["value"][1]) == sum(counts.values()):
                break
            time.sleep(0.5)
        else:
            log = (tmp_path / "prometheus.log").read_text(errors="replace")[-2000:]
            raise AssertionError(f"Prometheus summed {summed}, the servers count {counts}\n{log}")
        assert {r["metric"]["instance"]: float(r["value"][1]) for r in per_instance or []} == counts
        assert len(query(url, 'up{job="corrige-replicas"} == 1')) == 2
    finally:
        if prometheus is not None:
            prometheus.terminate()
            prometheus.wait(timeout=30)
        one.stop()
        two.stop()
