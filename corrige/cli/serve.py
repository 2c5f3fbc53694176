"""`corrige serve`: the HTTP server, one process or N replicas under Ray Serve.

Each option left unset falls back to its `CORRIGE_*` setting, so the options are declared once
here, each with the setting it overrides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from corrige.cli import DEFAULT_MODEL, app, console


def _setting(*decls: str, help: str, default: str, env: str) -> Any:
    """A `serve` option left unset defaults to its `CORRIGE_*` setting; the help says which and what the default is.

    The defaults are written here rather than read from `Settings` so that `--help` does not import the server.
    """
    return typer.Option(*decls, help=f"{help}  [default: {default}; env: CORRIGE_{env}]", show_default=False)


Batching = Annotated[
    str | None, _setting(help="none | threads | static | continuous.", default="continuous", env="BATCHING")
]
Host = Annotated[str | None, _setting(help="Address to listen on.", default="127.0.0.1", env="HOST")]
Port = Annotated[int | None, _setting(help="Port to listen on.", default="8000", env="PORT")]
ModelDir = Annotated[Path | None, _setting(help="Model directory.", default=DEFAULT_MODEL, env="MODEL_DIR")]
MaxBatch = Annotated[
    int | None,
    _setting(help="Most requests in one model call; 0: as many as --n-slots.", default="32", env="MAX_BATCH"),
]
MaxWaiting = Annotated[
    int | None, _setting(help="Queued requests beyond this get 503.", default="256", env="MAX_WAITING")
]
Slots = Annotated[int | None, _setting(help="KV cache slots (requests in flight).", default="64", env="N_SLOTS")]
Threads = Annotated[int | None, _setting(help="Worker threads of --batching threads.", default="4", env="N_THREADS")]
QueueTimeout = Annotated[
    float | None,
    _setting(help="Seconds a request may wait for the model (504).", default="10", env="QUEUE_TIMEOUT_S"),
]
SpeculativeTokens = Annotated[
    int | None,
    _setting(
        help="Guessed tokens checked per request per step (prompt lookup); 0: off.",
        default="8",
        env="SPECULATIVE_TOKENS",
    ),
]
EngineProcess = Annotated[
    bool | None,
    _setting(
        "--engine-process/--engine-thread",
        help="Run the engine in a child process or a thread.",
        default="engine-process",
        env="ENGINE_PROCESS",
    ),
]
RateLimit = Annotated[
    float | None,
    _setting(
        help="Requests/s per client; 0 turns off every rate limit (load tests do).", default="20", env="RATE_LIMIT"
    ),
]
MaxBodyBytes = Annotated[
    int | None, _setting(help="Larger request bodies get 413.", default="65536", env="MAX_BODY_BYTES")
]
DrainGrace = Annotated[
    float | None,
    _setting(help="Seconds in-flight requests get on SIGTERM.", default="10", env="DRAIN_GRACE_S"),
]
AccessLog = Annotated[
    bool | None,
    _setting("--access-log/--no-access-log", help="Log every request.", default="access-log", env="ACCESS_LOG"),
]
DatabaseUrl = Annotated[
    str | None,
    _setting(
        help="The learner portal's records in PostgreSQL (postgresql://…; needs corrige[postgres]).",
        default="SQLite at PORTAL_DB",
        env="DATABASE_URL",
    ),
]
Replicas = Annotated[
    int | None,
    typer.Option(
        help="Run N replicas behind Ray Serve's HTTP proxy on --host/--port (needs the cluster extra: "
        "pip install 'corrige[cluster]'); see docs/scaling.md.  [default: one server, no Ray]",
        min=1,
        show_default=False,
    ),
]
MaxReplicas = Annotated[
    int | None,
    typer.Option(help="With --replicas: autoscale between --replicas and this.  [default: --replicas]", min=1),
]
MetricsPort = Annotated[
    int, typer.Option(help="With --replicas: each replica serves /metrics on the first free port from this one.")
]


@app.command()
def serve(
    batching: Batching = None,
    host: Host = None,
    port: Port = None,
    model: ModelDir = None,
    max_batch: MaxBatch = None,
    max_waiting: MaxWaiting = None,
    n_slots: Slots = None,
    threads: Threads = None,
    queue_timeout: QueueTimeout = None,
    speculative_tokens: SpeculativeTokens = None,
    engine_process: EngineProcess = None,
    rate_limit: RateLimit = None,
    max_body_bytes: MaxBodyBytes = None,
    drain_grace: DrainGrace = None,
    access_log: AccessLog = None,
    database_url: DatabaseUrl = None,
    replicas: Replicas = None,
    max_replicas: MaxReplicas = None,
    metrics_port: MetricsPort = 9100,
) -> None:
    """Serve the tutor over HTTP (grammar API + OpenAI-compatible API). Options override CORRIGE_* variables."""
    import os

    from corrige.model.blas import limit_blas_threads

    given = {
        "batching": batching,
        "host": host,
        "port": port,
        "model_dir": model,
        "max_batch": max_batch,
        "max_waiting": max_waiting,
        "n_slots": n_slots,
        "n_threads": threads,
        "queue_timeout_s": queue_timeout,
        "speculative_tokens": speculative_tokens,
        "engine_process": engine_process,
        "rate_limit": rate_limit,
        "max_body_bytes": max_body_bytes,
        "drain_grace_s": drain_grace,
        "access_log": access_log,
        "database_url": database_url,
    }
    overrides: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))  # before NumPy loads
    from pydantic import ValidationError

    from corrige.server.runner import check_model_dir
    from corrige.server.runner import serve as run_server
    from corrige.server.settings import Settings

    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        raise typer.BadParameter(str(exc)) from exc
    try:
        check_model_dir(settings)
    except FileNotFoundError as exc:
        console.print(f"[red]error[/] {exc}")
        raise typer.Exit(2) from exc
    if (taken := _port_taken(settings.host, settings.port)) is not None:
        console.print(
            f"[red]error[/] port {settings.port} on {settings.host} is taken ({taken}): another server listens "
            "there. Stop it, or choose another port: corrige serve --port 8001 (make serve PORT=8001)"
        )
        raise typer.Exit(2)
    if replicas is not None:
        _serve_replicas(settings, overrides, replicas, max_replicas, metrics_port)
        return
    console.print(f"corrige: serving on [bold]http://{settings.host}:{settings.port}[/] (API docs at /docs)")
    run_server(settings)


def _port_taken(host: str, port: int) -> str | None:
    """Why `host:port` cannot be listened on (checked before the model loads), or None."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _serve_replicas(settings, overrides: dict, replicas: int, max_replicas: int | None, metrics_port: int) -> None:
    """`corrige serve --replicas N`: the replicas under Ray Serve (the cluster extra)."""
    from corrige.cluster.replica import ReplicaPlan

    try:
        plan = ReplicaPlan.from_settings(settings, replicas, max_replicas, metrics_port)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    try:
        from corrige.cluster import ray_serve
    except ImportError as exc:
        console.print(f"[red]error[/] --replicas needs Ray Serve: pip install 'corrige[cluster]' ({exc})")
        raise typer.Exit(2) from exc
    bounds = f"{plan.replicas}..{plan.max_replicas}" if plan.autoscaling else str(plan.replicas)
    console.print(
        f"corrige: {bounds} replicas behind Ray Serve on [bold]http://{settings.host}:{settings.port}[/], "
        f"at most {plan.max_ongoing_requests} requests in flight per replica, metrics from port {metrics_port}"
    )
    overrides.pop("host", None)
    overrides.pop("port", None)
    ray_serve.run(overrides, plan, settings.host, settings.port)
