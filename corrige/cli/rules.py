"""The knowledge base: `corrige rules search`, `corrige eval-retrieval`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corrige.cli import app, console, rules_app
from corrige.cli.options import CorpusSeed, JsonOutput, write_json

if TYPE_CHECKING:
    from corrige.tutor.retrieval import Retriever


def _parse_edit(spec: str) -> tuple[str, str]:
    original, sep, replacement = spec.partition("=>")
    if not sep or not original.strip() or not replacement.strip():
        raise typer.BadParameter(f"expected 'original => replacement', got {spec!r}")
    return original.strip(), replacement.strip()


@rules_app.command("search")
def rules_search(
    text: Annotated[str, typer.Argument(help="A learner sentence, or any question about a rule (English or Spanish).")],
    corrected: Annotated[str | None, typer.Option(help="The corrected sentence: its edits join the query.")] = None,
    edit: Annotated[list[str] | None, typer.Option("--edit", "-e", help="An edit 'original => replacement'.")] = None,
    category: Annotated[list[str] | None, typer.Option("--category", "-c", help="An error category id.")] = None,
    k: Annotated[int, typer.Option("-k", help="How many cards.")] = 5,
    mode: Annotated[
        str | None, typer.Option(help="hybrid | bm25 | dense (default: hybrid; bm25 without the model).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the hits as JSON.")] = False,
) -> None:
    """Rule cards for a sentence: `corrige rules search "I am married with Laura" --corrected "…married to Laura"`."""
    import json
    import os

    from corrige.model.blas import limit_blas_threads

    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))  # before NumPy loads
    from rich.table import Table

    from corrige.tutor.categories import CATEGORY_IDS
    from corrige.tutor.edits import diff_edits
    from corrige.tutor.retrieval import RetrievalError, Retriever

    unknown = [c for c in category or [] if c not in CATEGORY_IDS]
    if unknown:
        raise typer.BadParameter(f"unknown categories {unknown}; known: {', '.join(CATEGORY_IDS)}")
    if mode not in (None, "hybrid", "bm25", "dense"):
        raise typer.BadParameter(f"mode must be hybrid, bm25 or dense, not {mode!r}")
    edits: list = [_parse_edit(e) for e in edit or []]
    if corrected:
        edits += diff_edits(text, corrected)
    retriever = Retriever.load()
    try:
        hits = retriever.search(text, edits, category or [], k=k, mode=mode)  # type: ignore[arg-type]
    except RetrievalError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if as_json:
        rows = [h.summary() | {"bm25_rank": h.bm25_rank, "dense_rank": h.dense_rank} for h in hits]
        console.print_json(json.dumps({"mode": mode or retriever.mode, "hits": rows}, ensure_ascii=False))
        return
    table = Table("#", "card", "score", "bm25", "dense", "title", title=f"rule cards ({mode or retriever.mode})")
    for rank, h in enumerate(hits, start=1):
        table.add_row(
            str(rank), h.card.id, f"{h.score:.4f}", str(h.bm25_rank or "–"), str(h.dense_rank or "–"), h.card.title
        )
    console.print(table)
    for h in hits[:3]:
        ex = h.card.examples[0]
        console.print(
            f"[bold]{h.card.title}[/] ({h.card.label}, {h.card.level})\n  {h.card.explanation}\n"
            f"  [red]✗[/] {ex.wrong}\n  [green]✓[/] {ex.right}"
        )


@app.command("eval-retrieval")
def eval_retrieval(
    n_test: Annotated[int, typer.Option(help="Synthetic test examples to draw single-error queries from.")] = 900,
    seed: CorpusSeed = 0,
    misses: Annotated[
        int,
        typer.Option(
            help="Show up to this many hybrid misses (top 5); with --edits, also up to this many edits per set "
            "and policy whose card does not teach them or is not the pinned one."
        ),
    ] = 0,
    edits: Annotated[
        list[Path] | None,
        typer.Option(
            "--edits",
            help="Also check the first card beside every edit the tutor makes on these sentences (a TSV's "
            "first column, or one sentence a line; e.g. corrige/tutor/realistic.tsv, JFLEG's dev.src).",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    output: JsonOutput = None,
) -> None:
    """Retrieval quality: recall@1/@5 of the right rule card for BM25, dense and hybrid retrieval;
    with --edits, whether the first card beside each of the tutor's edits teaches that edit."""
    import dataclasses
    import os

    from corrige.model.blas import limit_blas_threads

    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))  # before NumPy loads
    from rich.table import Table

    from corrige.evaluation import retrieval_eval as reval
    from corrige.tutor.retrieval import Retriever

    retriever = Retriever.load()
    queries = reval.all_queries(n_test=n_test, data_seed=seed)
    report = reval.evaluate(retriever, queries)
    # Robustness: the same queries without their categories (a category the tutor missed, or CLI text).
    bare = [dataclasses.replace(q, query=dataclasses.replace(q.query, categories=())) for q in queries]
    bare_report = reval.evaluate(retriever, bare)
    results = {
        "with_categories": report.as_dict(),
        "without_categories": bare_report.as_dict(),
        "command": f"corrige eval-retrieval --n-test {n_test} --seed {seed}",
    }
    for name, rep in (("with categories (as served)", report), ("without categories", bare_report)):
        table = Table(
            "queries", "n", *(f"{m} R@{k}" for m in rep.overall for k in reval.KS), title=f"retrieval: {name}"
        )
        rows = {**rep.by_source, "all": rep.overall}
        for source, recalls in rows.items():
            n = next(iter(recalls.values())).n
            table.add_row(source, str(n), *(f"{r.at(k):.3f}" for r in recalls.values() for k in reval.KS))
        console.print(table)
    console.print(
        f"{report.n_queries} queries, {report.n_pinned} with a pinned sub-rule "
        "(the others accept any card of their category)"
    )
    if "hybrid" in report.overall:
        h5 = report.overall["hybrid"].at(5)
        others = max(report.overall["bm25"].at(5), report.overall["dense"].at(5))
        met = h5 >= 0.95 and h5 > others
        results["target_met"] = met
        console.print(
            f"target hybrid R@5 ≥ 0.95 and above both: {'[green]met' if met else '[red]not met'}[/] "
            f"({h5:.3f} vs best single {others:.3f})"
        )
    for _, lq, top in report.misses[:misses]:
        console.print(
            f"[yellow]miss[/] {lq.source}: {lq.query.sentence!r} {list(lq.query.edits)} "
            f"want {sorted(lq.relevant)} got {top}"
        )
    if edits:
        results["edit_cards"] = _edit_cards(retriever, edits, misses)
    if output:
        write_json(output, results, ensure_ascii=False)


def _edit_cards(retriever: Retriever, paths: list[Path], misses: int) -> dict[str, dict]:
    """The edit-level check of each file (`corrige.evaluation.edit_cards`), as a table."""
    from rich.table import Table

    from corrige.evaluation import edit_cards
    from corrige.tutor.agent import Tutor

    tutor = Tutor.load()
    table = Table(
        "sentences",
        "edits",
        "policy",
        "with a card",
        "category agrees",
        "direction agrees",
        "pinned card (n)",
        title="the first card beside each edit",
    )
    found: dict[str, dict] = {}
    for path in paths:
        sentences = edit_cards.read_sentences(path)
        with console.status(f"correcting {len(sentences)} sentences of {path.name}"):
            cases = edit_cards.tutor_edits(tutor, sentences)
        scores = edit_cards.score(retriever, cases)
        found[path.name] = {policy: s.as_dict() for policy, s in scores.items()}
        for policy, s in scores.items():
            d = s.as_dict()
            table.add_row(
                f"{path.name} ({len(sentences)})",
                str(d["edits"]),
                policy,
                str(d["shown"]),
                f"{d['category_agreement']:.3f}",
                f"{d['direction_agreement']:.3f}",
                f"{d['pinned_agreement']:.3f} ({d['pinned']})",
            )
            for case, card in s.wrong[:misses]:
                console.print(f"[yellow]{policy}[/] {case.original} → {case.replacement} ({case.category}): {card}")
            for case, card, wanted in s.off_pin[:misses]:
                console.print(
                    f"[yellow]{policy}, pinned[/] {case.original} → {case.replacement} ({case.category}): "
                    f"{card}, expected {' or '.join(sorted(wanted))}"
                )
    console.print(table)
    return found
