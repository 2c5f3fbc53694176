"""The `corrige` Ray Serve deployment: N replicas of the FastAPI app behind Ray Serve's HTTP proxy.

Each replica is a Ray actor that builds the same app as `corrige serve` (`create_app`), runs its
lifespan (model, engine process with continuous batching, portal, observability) and answers
what the proxy gives it; the API, its errors and its streams pass through unchanged.

* health: Ray calls `check_health` every few seconds; it asks the app's own `GET /readyz` (in
  process, through every middleware). A replica whose engine is restarting gets
  `UNREADY_GRACE_S` to come back before Ray replaces it; one whose engine was given up fails at
  once.
* drain on scale-down or `serve.delete`: Ray stops routing to the replica and waits for its
  requests (`graceful_shutdown_timeout_s`); then the app's lifespan shutdown drains what is left
  (503 `draining`, `drain_grace_s`) and closes the engine.
* metrics: each replica serves `/metrics` on its own port (`metrics_port.py`); through the
  proxy `/metrics` is refused (`BehindProxy`).
* a replica that dies under a request: the proxy sends it once more, else answers 503
  `replica_unavailable` (`proxy.py`, which `start_ray` has the proxy load).
* ports: with a loopback `--host`, every server of Ray's (its daemons, the proxy, each replica's
  gRPC server) listens on 127.0.0.1 (`start_ray`, `_replica_grpc_on_loopback`).

    corrige serve --replicas 2                       # `run` below
    serve run deploy/ray/serve.yaml                  # the same application from Ray's CLI
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
from ray import serve

from corrige.cluster.metrics_port import start_metrics_listener
from corrige.cluster.proxy import PROXY_CALLBACK
from corrige.cluster.replica import (
    DEFAULT_METRICS_PORT,
    METRICS_PORT_SPAN,
    UNREADY_GRACE_S,
    ReplicaPlan,
    node_ip_address,
    replica_settings,
)
from corrige.model.blas import limit_blas_threads
from corrige.server.app import create_app
from corrige.server.errors import send_error
from corrige.server.runner import check_model_dir
from corrige.server.settings import Settings

logger = logging.getLogger(__name__)

APP_NAME = "corrige"


@serve.ingress()
class CorrigeReplica:
    """One replica: the app, the readiness check Ray calls, and the replica's metrics port."""

    def __init__(self, settings: dict[str, Any], metrics_host: str, metrics_port: int) -> None:
        _replica_grpc_on_loopback()
        self.settings = Settings(**settings)
        limit_blas_threads(self.settings.blas_threads)
        check_model_dir(self.settings)
        self.metrics_host = metrics_host
        self.first_metrics_port = metrics_port
        self.metrics_port: int | None = None
        self._metrics_server: asyncio.Server | None = None
        self._unready_since: float | None = None
        self._given_up = False
        self.corrige_app: Any = None  # (`app` is the wrapper's own property)

    def __serve_build_asgi_app__(self) -> Any:
        self.corrige_app = create_app(self.settings)
        self.corrige_app.state.stop_server = self._give_up  # the engine died too often: Ray replaces the replica
        ports = f"the first free from {self.first_metrics_port}"
        self.corrige_app.add_middleware(BehindProxy, metrics_ports=ports)  # outermost
        return self.corrige_app

    def _give_up(self, exit_status: int) -> None:
        logger.critical("engine given up (status %d): this replica reports unhealthy", exit_status)
        self._given_up = True

    async def check_health(self) -> None:
        """Raise when the replica should be replaced: its engine was given up, or `/readyz` has
        failed for longer than `UNREADY_GRACE_S` (a draining replica is stopping anyway)."""
        if self._given_up:
            raise RuntimeError("the engine was given up")
        if self._metrics_server is None and getattr(self.corrige_app.state, "metrics", None) is not None:
            self._metrics_server, self.metrics_port = await start_metrics_listener(
                self.corrige_app.state.metrics.exposition, self.metrics_host, self.first_metrics_port, METRICS_PORT_SPAN
            )
        status, code = await self._readyz()
        if status == 200 or code == "draining":
            self._unready_since = None
            return
        now = time.monotonic()
        self._unready_since = self._unready_since or now
        if now - self._unready_since > UNREADY_GRACE_S:
            raise RuntimeError(f"/readyz has answered {status} {code} for {now - self._unready_since:.0f} s")

    async def _readyz(self) -> tuple[int, str]:
        transport = httpx.ASGITransport(app=self.corrige_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://replica") as client:
            response = await client.get("/readyz")
        code = "" if response.status_code == 200 else response.json().get("error", {}).get("code", "")
        return response.status_code, code

    async def __del__(self) -> None:  # after the app's lifespan shutdown (its drain)
        if self._metrics_server is not None:
            self._metrics_server.close()


CorrigeDeployment = serve.deployment(name="corrige")(CorrigeReplica)


def _replica_grpc_on_loopback() -> None:
    """On a node whose address is 127.0.0.1 (`start_ray` with a loopback host), this replica's gRPC
    server for the proxy's requests listens there too.

    Ray Serve starts that server once the replica is built, on `[::]:0` written into its code (every
    interface; no setting changes it); the proxy connects to it at the node's address, so on a
    loopback node 127.0.0.1 is all it needs. The address is rewritten as the replica adds the port;
    should Ray's code change, the server stays where Ray puts it, and the e2e test says so."""
    import ray
    from ray.serve._private import replica as ray_replica

    add_port = getattr(ray_replica, "add_port_to_grpc_server", None)
    if add_port is None or ray.util.get_node_ip_address() != "127.0.0.1":
        return

    def add_port_on_loopback(server: Any, address: str) -> Any:
        if address.startswith("[::]:"):
            address = "127.0.0.1:" + address.removeprefix("[::]:")
        return add_port(server, address)

    ray_replica.add_port_to_grpc_server = add_port_on_loopback


class BehindProxy:
    """What differs behind Ray's proxy, outermost on each replica's app.

    * One `X-Request-ID` on a response, as `corrige serve` sends. The proxy gives every request
      an id in that header (the client's, when it sent one), which the app takes as the
      request's id, and adds it to the response; the app's own copy is dropped here so that the
      client does not get it twice.
    * `GET /metrics` through the proxy would be one replica's counters, a different one at each
      scrape: it answers 404 `metrics_disabled`, naming the replicas' own metrics ports, so that
      a Prometheus job left on the proxy's address scrapes nothing rather than double counts.
    """

    def __init__(self, app: Any, metrics_ports: str) -> None:
        self.app = app
        self.metrics_ports = metrics_ports

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == "/metrics":
            ids = [v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"x-request-id"]
            message = f"each replica serves /metrics on its own port ({self.metrics_ports}); see docs/scaling.md"
            await send_error(_without_id(send), 404, "metrics_disabled", message, ids[0] if ids else None)
            return
        await self.app(scope, receive, _without_id(send))


def _without_id(send: Any) -> Any:
    async def send_without_id(message: dict) -> None:
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"x-request-id"]
            message = {**message, "headers": headers}
        await send(message)

    return send_without_id


def corrige_env() -> dict[str, str]:
    """The CORRIGE_* variables of this process, for every replica (a remote node has its own environment)."""
    return {k: v for k, v in os.environ.items() if k.startswith("CORRIGE_")}


def application(overrides: dict[str, Any], plan: ReplicaPlan, metrics_host: str = "127.0.0.1") -> serve.Application:
    """The deployment with the plan's options, bound to the settings every replica builds (one
    session key for all of them: `replica_settings`)."""
    settings = replica_settings(overrides)
    options = plan.deployment_options()
    # Ray's own per-request log line follows the server's access log setting
    options["logging_config"] = {"enable_access_log": bool(Settings(**settings).access_log)}
    return CorrigeDeployment.options(**options).bind(settings, metrics_host, plan.metrics_port)


def app_builder(args: dict[str, Any]) -> serve.Application:
    """For `serve run deploy/ray/serve.yaml`: args `replicas`, `max_replicas`, `metrics_port`,
    `metrics_host` and `settings` (Settings fields; the rest from CORRIGE_* variables)."""
    overrides = dict(args.get("settings") or {})
    plan = ReplicaPlan.from_settings(
        Settings(**overrides),
        int(args.get("replicas", 1)),
        args.get("max_replicas"),
        int(args.get("metrics_port", DEFAULT_METRICS_PORT)),
        float(args.get("num_cpus", 1.0)),
    )
    return application(overrides, plan, str(args.get("metrics_host", "127.0.0.1")))


def run(overrides: dict[str, Any], plan: ReplicaPlan, host: str, port: int) -> None:
    """Start a local Ray cluster, the proxy on host:port and the replicas; block until SIGTERM or
    SIGINT, then delete the application (each replica drains) and stop Ray."""
    import ray

    # room for every replica and one replacement: a killed replica's CPU is released only once Ray
    # has noticed, and its replacement should not wait for that
    cpus = max(os.cpu_count() or 1, math.ceil(plan.max_replicas * plan.num_cpus)) + math.ceil(plan.num_cpus)
    start_ray(host, cpus, runtime_env={"env_vars": corrige_env()})
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": host, "port": port})
        serve.run(application(overrides, plan), name=APP_NAME, route_prefix="/", blocking=False)
        logger.info("%d replicas behind http://%s:%d", plan.replicas, host, port)
        stop.wait()
        logger.info("stopping: each replica drains")
        serve.delete(APP_NAME)
        logger.info("replicas stopped")
        serve.shutdown()
    finally:
        ray.shutdown()
        logger.info("ray stopped")


def start_ray(host: str, num_cpus: int, **options: Any) -> None:
    """`ray.init` of a local cluster for the replicas, its ports on `host` when that is a loopback
    address (see `node_ip_address`), its proxy with `ReplicaRetry` (corrige.cluster.proxy)."""
    import ray

    # Ray starts its workers (the replicas, the proxy) at niceness 15 so that its own daemons come
    # first; on a machine shared with other work that starves the replicas. They run at the
    # niceness of `corrige serve` instead, as one server does (RAY_worker_niceness overrides).
    os.environ.setdefault("RAY_worker_niceness", "0")
    # read by the proxy, a process Ray starts with this environment
    os.environ.setdefault("RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH", PROXY_CALLBACK)
    node_ip = node_ip_address(host)
    with _loopback_node_ip(node_ip):
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            logging_level=logging.WARNING,
            _node_ip_address=node_ip,
            **options,
        )


@contextlib.contextmanager
def _loopback_node_ip(node_ip: str | None) -> Iterator[None]:
    """`ray.init(_node_ip_address="127.0.0.1")` swaps a loopback address for the machine's own
    (`resolve_ip_for_localhost`: a node on loopback cannot take workers from other machines); a
    local cluster of one machine wants exactly that loopback address, so the swap is skipped
    while Ray starts."""
    if node_ip != "127.0.0.1":
        yield
        return
    from ray._private import services

    resolve = services.resolve_ip_for_localhost
    services.resolve_ip_for_localhost = lambda host: host
    try:
        yield
    finally:
        services.resolve_ip_for_localhost = resolve
