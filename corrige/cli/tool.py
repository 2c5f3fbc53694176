"""`corrige tool …`: small tools the server runs as subprocesses, traced across the process boundary."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

from corrige.cli import app

tool_app = typer.Typer(
    help="Tools the server runs in a subprocess; they continue the caller's trace from TRACEPARENT.",
    no_args_is_help=True,
)
app.add_typer(tool_app, name="tool")


def _store_path(store: Path | None) -> Path | None:
    if store is not None:
        return store
    env = os.environ.get("CORRIGE_TRACE_STORE")
    return Path(env) if env else None


@tool_app.command("rules")
def tool_rules(
    query: Annotated[str, typer.Argument(help="A learner sentence or a question about a rule.")],
    k: Annotated[int, typer.Option(min=1, max=10, help="How many rule cards.")] = 3,
    store: Annotated[
        Path | None, typer.Option(help="Trace store to write the tool's span to (default: $CORRIGE_TRACE_STORE).")
    ] = None,
) -> None:
    """Look up rule cards with BM25 and print them as JSON (one `tool.rules` span)."""
    from corrige.obs.tool import tool_span
    from corrige.tutor.retrieval import Retriever

    with tool_span("tool.rules", _store_path(store), **{"tool.query": query, "tool.k": k}) as span:
        hits = Retriever.load(dense=False).search(query, k=k, mode="bm25")
        span.set_attribute("retrieve.card_ids", [h.card.id for h in hits])
        out = json.dumps({"rules": [h.summary() for h in hits]}, ensure_ascii=False)
        span.set_attribute("bytes.out", len(out.encode()))
    typer.echo(out)
