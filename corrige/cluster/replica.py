"""What a deployment of N replicas is, in plain data (no Ray import: the CLI, the tests and the
docs read it without the extra installed)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from corrige.portal.sessions import load_or_create_secret
from corrige.portal.state import secret_path
from corrige.server.settings import Settings

DEFAULT_METRICS_PORT = 9100  # replica k's /metrics listener takes the first free port from here
METRICS_PORT_SPAN = 32  # ... within this many: Prometheus scrapes the range (deploy/prometheus.yml)
HEALTH_CHECK_PERIOD_S = 5.0
HEALTH_CHECK_TIMEOUT_S = 10.0
UNREADY_GRACE_S = 30.0  # a replica whose engine restarts (503 engine_restarting) is given this long


@dataclass(frozen=True)
class ReplicaPlan:
    """The Ray Serve settings of the `corrige` deployment.

    `max_ongoing_requests` is the engine's own bound: a full batch running plus `max_waiting`
    queued. A replica never gets more than it would accept, so the proxy holds the rest and
    gives them to whichever replica frees a place first (a replica's 503 `overloaded` means the
    whole deployment is full). Autoscaling aims at one full batch per replica: past that a
    request waits for a slot instead of sharing a model step.
    """

    replicas: int
    max_replicas: int
    max_ongoing_requests: int
    target_ongoing_requests: int
    graceful_shutdown_timeout_s: float
    metrics_port: int = DEFAULT_METRICS_PORT
    num_cpus: float = 1.0

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        replicas: int,
        max_replicas: int | None = None,
        metrics_port: int = DEFAULT_METRICS_PORT,
        num_cpus: float = 1.0,
    ) -> ReplicaPlan:
        if replicas < 1:
            raise ValueError(f"replicas must be at least 1, not {replicas}")
        top = max_replicas if max_replicas is not None else replicas
        if top < replicas:
            raise ValueError(f"max replicas ({top}) below replicas ({replicas})")
        return cls(
            replicas=replicas,
            max_replicas=top,
            max_ongoing_requests=settings.batch_limit + settings.max_waiting,
            target_ongoing_requests=settings.batch_limit,
            # Ray waits this long for a replica's requests to finish before it stops it, then the
            # app's own drain (lifespan shutdown) gives the stragglers drain_grace_s
            graceful_shutdown_timeout_s=settings.drain_grace_s + 5.0,
            metrics_port=metrics_port,
            num_cpus=num_cpus,
        )

    @property
    def autoscaling(self) -> bool:
        return self.max_replicas > self.replicas

    def deployment_options(self) -> dict:
        """Keyword arguments of `serve.deployment(...)` / `.options(...)`."""
        options: dict = {
            "max_ongoing_requests": self.max_ongoing_requests,
            "health_check_period_s": HEALTH_CHECK_PERIOD_S,
            "health_check_timeout_s": HEALTH_CHECK_TIMEOUT_S,
            "graceful_shutdown_wait_loop_s": 1.0,
            "graceful_shutdown_timeout_s": self.graceful_shutdown_timeout_s,
            "ray_actor_options": {"num_cpus": self.num_cpus},
        }
        if self.autoscaling:
            options["autoscaling_config"] = {
                "min_replicas": self.replicas,
                "initial_replicas": self.replicas,
                "max_replicas": self.max_replicas,
                "target_ongoing_requests": self.target_ongoing_requests,
            }
        else:
            options["num_replicas"] = self.replicas
        return options


def replica_settings(overrides: dict[str, Any]) -> dict[str, Any]:
    """The settings every replica builds its app from: `overrides` (as Ray can pass them), with
    the session key the replicas share. A cookie signed by one replica must be good on the next:
    without `session_secret` (an override or CORRIGE_SESSION_SECRET) the key is read, or made
    once, here in the process that starts the replicas (kept next to its `portal_db`, as one
    server keeps it) and handed to each, whatever machine it runs on."""
    settings: dict[str, Any] = {k: (str(v) if k == "model_dir" else v) for k, v in overrides.items()}
    chosen = Settings(**settings)
    if chosen.session_secret is None:
        settings["session_secret"] = load_or_create_secret(secret_path(Path(chosen.portal_db)))
    return settings


def node_ip_address(host: str) -> str | None:
    """The address Ray's node takes for `host`, which decides where Ray's own servers listen.

    Ray's daemons and every worker (GCS, raylet, the agents, the controller, the proxy, the
    replicas: each has a gRPC server) listen on 127.0.0.1 when the node's address is 127.0.0.1, and
    on every interface otherwise; this Ray has no other setting for it. So a loopback `host` makes
    the node's address 127.0.0.1; a wildcard (`0.0.0.0`, `::`) leaves Ray to pick the machine's
    address (None), as does a host name; any other address is the node's address, Ray's servers
    still listening on every interface (docs/scaling.md).
    """
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    if address.is_loopback:
        return "127.0.0.1"
    return None if address.is_unspecified else host
