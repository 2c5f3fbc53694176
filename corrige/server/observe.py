"""Start-up wiring of the request's side systems: tracing, metrics and the rule cards.

Kept out of `lifecycle.py` so the lifespan reads as the order of things; each piece is optional
and configured by `Settings` (`tracing`, `metrics`, `rules`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from corrige.engine import Engine
from corrige.obs.budget import BudgetError, load_budget
from corrige.obs.metrics import ServerMetrics
from corrige.obs.tracing import Tracing, TracingConfig
from corrige.server.settings import Settings
from corrige.tutor.rule_lookup import RuleLookup

logger = logging.getLogger(__name__)


def budget_allocations(settings: Settings) -> dict[str, tuple[float, tuple[str, ...]]]:
    """The latency budget's stages, name → (seconds, span names), for the burn-rate gauge."""
    try:
        budget = load_budget(settings.budget_file, model=settings.served_model)
    except BudgetError as exc:  # a bad budget file must not stop the server; the gauge stays empty
        logger.warning("latency budget not loaded (%s); no burn rates", exc)
        return {}
    return {a.name: (a.ms / 1000.0, a.spans) for a in budget.allocations if a.ms > 0}


def start_observability(state: Any, settings: Settings, engine: Engine) -> Callable[[], None]:
    """Put `tracing`, `trace_store` and `metrics` on the app state; return the function that stops them."""
    tracing = None
    if settings.tracing:
        config = TracingConfig(
            store_path=settings.trace_store,
            max_spans=settings.trace_store_max_spans,
            otlp_endpoint=settings.otlp_endpoint,
            writer_process=settings.trace_writer_process,
            instance=settings.instance,
        )
        tracing = Tracing(config)
        logger.info("tracing on: spans to %s", settings.trace_store)
    state.tracing = tracing
    state.trace_store = tracing.store if tracing is not None else None
    unsubscribe = None
    metrics = None
    if settings.metrics:
        store = state.trace_store
        metrics = ServerMetrics(
            snapshot=engine.snapshot,
            orphans=store.count_orphans if store is not None else None,
            allocations=budget_allocations(settings),
        )
        unsubscribe = engine.subscribe(on_step=metrics.on_step, on_request=metrics.on_engine_request)
    state.metrics = metrics

    def stop() -> None:
        if unsubscribe is not None:
            unsubscribe()
        if tracing is not None:
            tracing.shutdown()

    return stop


def load_rules(settings: Settings) -> RuleLookup | None:
    """The rule-card lookup the corrections use, or None when `rules` is off."""
    if settings.rules == "off":
        return None
    from corrige.tutor.retrieval import Retriever

    retriever = Retriever.load(dense=settings.rules == "hybrid")
    lookup = RuleLookup(retriever, k=settings.rules_k)
    logger.info("rule cards: %d, retrieval %s", len(retriever.cards), lookup.mode)
    return lookup
