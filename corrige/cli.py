"""The `corrige` command line. Heavy imports happen inside commands so `--help` is instant."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(
    help="corrige: a grammar tutor for Spanish speakers learning English, served by a tiny GPT on a CPU.",
    no_args_is_help=True,
    add_completion=False,
)
bench_app = typer.Typer(help="Benchmarks: medians and ratios, measured side by side in one run.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
rules_app = typer.Typer(help="Grammar rule cards: search the knowledge base.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")

console = Console()


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at DEBUG level.")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def _numpy_runtime_threads() -> None:
    """One BLAS thread (CORRIGE_BLAS_THREADS overrides): the runtime's matmuls are too small to
    share, and a second BLAS thread fighting a busy core slows them many times over."""
    import os

    from corrige.model.blas import limit_blas_threads

    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))


@app.command()
def version() -> None:
    """Print the installed version."""
    from corrige import __version__

    console.print(f"corrige {__version__}")


@app.command()
def train(
    out: Annotated[Path, typer.Option(help="Output model directory.")] = Path("runs/tutor"),
    preset: Annotated[str, typer.Option(help="Model preset: seed (~0.5M params) or tutor (bundled).")] = "tutor",
    minutes: Annotated[float, typer.Option(help="Wall-clock budget; the LR schedule ends with it.")] = 40.0,
    max_steps: Annotated[int, typer.Option(help="Step budget; the first budget to run out ends training.")] = 20_000,
    n_train: Annotated[int, typer.Option(help="Synthetic training examples.")] = 200_000,
    batch_size: Annotated[int, typer.Option()] = 64,
    lr: Annotated[float, typer.Option(help="Peak learning rate (AdamW, cosine decay).")] = 3e-3,
    seed: Annotated[int, typer.Option(help="Seed for initialisation and batch order.")] = 0,
    data_seed: Annotated[int, typer.Option(help="Seed of the synthetic corpus.")] = 0,
    eval_every: Annotated[int, typer.Option(help="Steps between dev evaluations.")] = 1_000,
    threads: Annotated[int, typer.Option(help="Torch threads (0: default).")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue from OUT/checkpoint.pt if present.")] = False,
) -> None:
    """Train a tutor model with PyTorch (needs the `train` extra) and export it for the NumPy runtime."""
    try:
        from corrige.train.loop import TrainConfig
        from corrige.train.loop import train as run_training
    except ImportError as exc:  # torch missing
        raise typer.BadParameter(f"training needs torch: pip install -e '.[train]' ({exc})") from exc
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    cfg = TrainConfig(
        preset=preset, data_seed=data_seed, seed=seed, n_train=n_train, batch_size=batch_size, lr=lr,
        max_steps=max_steps, max_minutes=minutes, eval_every=eval_every, threads=threads,
    )
    with Progress(
        TextColumn("[bold]train"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("step {task.fields[step]} loss {task.fields[loss]:.4f}"), TimeElapsedColumn(), console=console,
    ) as bar:
        task = bar.add_task("train", total=1.0, step=0, loss=float("nan"))
        result = run_training(
            cfg, out, resume=resume,
            on_step=lambda step, loss, progress: bar.update(task, completed=progress, step=step, loss=loss),
        )
    console.print(f"[green]trained[/] {result.steps} steps in {result.minutes:.1f} min → {result.out_dir}")
    for point in result.history:
        console.print(f"  step {point.step:>6}: dev loss {point.dev_loss:.4f}, dev exact {point.dev_exact:.3f}")


@app.command()
def correct(
    sentences: Annotated[list[str], typer.Argument(help="One or more English sentences to correct.")],
    model: Annotated[Path | None, typer.Option(help="Model directory (default: the bundled tutor).")] = None,
) -> None:
    """Correct sentences and explain in Spanish: `corrige correct "Yesterday I goed to the store"`."""
    _numpy_runtime_threads()
    from rich.table import Table

    from corrige.tutor.agent import Tutor
    from corrige.tutor.codec import PromptTooLong

    tutor = Tutor.load(model)
    for sentence in sentences:
        try:
            c = tutor.correct(sentence)
        except PromptTooLong as exc:
            console.print(f"[red]error[/] {exc}")
            raise typer.Exit(2) from exc
        console.print(f"[bold]{c.sentence}[/]")
        if c.abstained:
            console.print(f"  [yellow]sin cambios[/] ({c.abstain_reason}): {c.gloss}")
            continue
        mark = "[green]✓[/]" if not c.changed else "[cyan]→[/]"
        console.print(f"  {mark} {c.corrected}\n  [italic]{c.gloss}[/]")
        if c.edits:
            table = Table("start", "end", "original", "replacement", "category", box=None, padding=(0, 1))
            for e in c.edits:
                table.add_row(str(e.start), str(e.end), e.original or "∅", e.replacement or "∅", e.category)
            console.print(table)


@app.command("eval")
def eval_cmd(
    model: Annotated[Path | None, typer.Option(help="Model directory (default: the bundled tutor).")] = None,
    split: Annotated[str, typer.Option(help="Synthetic split: test or dev.")] = "test",
    n: Annotated[int, typer.Option(help="Synthetic sentences to evaluate.")] = 2000,
    realistic: Annotated[bool, typer.Option(help="Also evaluate the hand-written learner sentences.")] = True,
    sweep: Annotated[bool, typer.Option(help="Compare abstention thresholds on the same generations.")] = False,
    latency: Annotated[bool, typer.Option(help="Also time single corrections at batch 1.")] = True,
    card: Annotated[bool, typer.Option(help="Write MODEL_CARD.md and eval.json into the model directory.")] = False,
    min_token_prob: Annotated[float | None, typer.Option(help="Override the abstention threshold.")] = None,
) -> None:
    """Exact match, edit precision/recall/F0.5, false alarms, abstentions, per category."""
    _numpy_runtime_threads()
    from dataclasses import asdict, replace

    from rich.progress import Progress
    from rich.table import Table

    from corrige.tutor import assess
    from corrige.tutor.agent import BUNDLED_MODEL, Tutor

    tutor = Tutor.load(model)
    if min_token_prob is not None:
        tutor.config = replace(tutor.config, min_token_prob=min_token_prob)
    sets = {f"synthetic {split}": assess.synthetic_items(split, n=n)}
    if realistic:
        sets["realistic (hand-written)"] = assess.realistic_items()
    results: dict = {"sets": {}, "params": tutor.weights.cfg.num_params(),
                     "command": "corrige eval " + ("--card" if card else "")}
    summary = Table("set", "n", "exact", "P", "R", "F0.5", "false alarms", "abstain", title="tutor evaluation")
    for name, items in sets.items():
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(name, total=len(items))
            generated = assess.generate_all(tutor, items, on_batch=lambda k, t=task: bar.advance(t, k))
        metrics = assess.score(generated, assess.interpret_all(tutor, generated))
        results["sets"][name] = {k: v for k, v in asdict(metrics).items() if k != "per_category"}
        if name.startswith("synthetic"):
            results["per_category"] = {k: asdict(v) for k, v in metrics.per_category.items()}
        summary.add_row(name, str(metrics.n), f"{metrics.exact_match:.3f}", f"{metrics.precision:.3f}",
                        f"{metrics.recall:.3f}", f"{metrics.f05:.3f}", f"{metrics.false_alarm_rate:.3f}",
                        f"{metrics.abstain_rate:.3f}")
        if sweep:
            table = Table(
                "min token prob", "exact", "P", "F0.5", "false alarms", "abstain", title=f"threshold sweep: {name}"
            )
            for t, m in assess.threshold_sweep(tutor, generated, [0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7]).items():
                table.add_row(f"{t:.2f}", f"{m.exact_match:.3f}", f"{m.precision:.3f}", f"{m.f05:.3f}",
                              f"{m.false_alarm_rate:.3f}", f"{m.abstain_rate:.3f}")
            console.print(table)
    console.print(summary)
    if "per_category" in results:
        cats = Table("category", "sentences", "exact", "recall", "precision", title="per category (synthetic)")
        for cat, c in sorted(results["per_category"].items()):
            cats.add_row(
                cat, str(c["sentences"]), f"{c['exact_match']:.3f}", f"{c['recall']:.3f}", f"{c['precision']:.3f}"
            )
        console.print(cats)
    if latency:
        sentences = [i.source for i in sets[f"synthetic {split}"][:100]]
        results["latency"] = assess.correction_latency_ms(tutor, sentences)
        lat = results["latency"]
        console.print(f"batch-1 correction: p50 {lat['p50_ms']:.2f} ms, p95 {lat['p95_ms']:.2f} ms "
                      f"({lat['mean_prompt_tokens']:.1f} tokens in, {lat['mean_completion_tokens']:.1f} out)")
    if card:
        from corrige.train.card import write_card

        syn = results["sets"][f"synthetic {split}"]
        targets = [
            {"name": "synthetic exact match ≥ 0.90", "value": f"{syn['exact_match']:.3f}",
             "met": syn["exact_match"] >= 0.9},
            {"name": "synthetic edit F0.5 ≥ 0.90", "value": f"{syn['f05']:.3f}", "met": syn["f05"] >= 0.9},
            {"name": "synthetic false alarms ≤ 2%", "value": f"{syn['false_alarm_rate']:.3f}",
             "met": syn["false_alarm_rate"] <= 0.02},
        ]
        real = results["sets"].get("realistic (hand-written)")
        if real:
            targets += [
                {"name": "realistic edit F0.5 ≥ 0.60", "value": f"{real['f05']:.3f}", "met": real["f05"] >= 0.6},
                {"name": "realistic false alarms ≤ 5%", "value": f"{real['false_alarm_rate']:.3f}",
                 "met": real["false_alarm_rate"] <= 0.05},
            ]
        if latency:
            lat = results["latency"]
            targets.append({"name": "batch-1 correction ≤ 8 ms (p50)", "value": f"{lat['p50_ms']:.2f} ms",
                            "met": lat["p50_ms"] <= 8})
        results["targets"] = targets
        path = write_card(Path(model) if model else BUNDLED_MODEL, results)
        console.print(f"[green]wrote[/] {path}")


@app.command()
def serve(
    batching: Annotated[str | None, typer.Option(help="none | threads | static | continuous.")] = None,
    host: Annotated[str | None, typer.Option(help="Address to listen on.")] = None,
    port: Annotated[int | None, typer.Option(help="Port to listen on.")] = None,
    model: Annotated[Path | None, typer.Option(help="Model directory (default: the bundled tutor).")] = None,
    max_batch: Annotated[int | None, typer.Option(help="Most requests in one model call.")] = None,
    max_waiting: Annotated[int | None, typer.Option(help="Queued requests beyond this get 503.")] = None,
    n_slots: Annotated[int | None, typer.Option(help="KV cache slots (requests in flight).")] = None,
    threads: Annotated[int | None, typer.Option(help="Worker threads of --batching threads.")] = None,
    queue_timeout: Annotated[float | None, typer.Option(help="Seconds a request may wait for the model (504).")] = None,
    rate_limit: Annotated[float | None, typer.Option(help="Requests/s per client; 0 disables the limit.")] = None,
    max_body_bytes: Annotated[int | None, typer.Option(help="Larger request bodies get 413.")] = None,
    drain_grace: Annotated[float | None, typer.Option(help="Seconds in-flight requests get on SIGTERM.")] = None,
    access_log: Annotated[bool | None, typer.Option("--access-log/--no-access-log", help="Log every request.")] = None,
) -> None:
    """Serve the tutor over HTTP (grammar API + OpenAI-compatible API). Options override CORRIGE_* variables."""
    import os

    from corrige.model.blas import limit_blas_threads

    given = {
        "batching": batching, "host": host, "port": port, "model_dir": model, "max_batch": max_batch,
        "max_waiting": max_waiting, "n_slots": n_slots, "n_threads": threads, "queue_timeout_s": queue_timeout,
        "rate_limit": rate_limit, "max_body_bytes": max_body_bytes, "drain_grace_s": drain_grace,
        "access_log": access_log,
    }
    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))  # before NumPy loads
    from pydantic import ValidationError

    from corrige.server.runner import check_model_dir
    from corrige.server.runner import serve as run_server
    from corrige.server.settings import Settings

    try:
        settings = Settings(**{k: v for k, v in given.items() if v is not None})
    except ValidationError as exc:
        raise typer.BadParameter(str(exc)) from exc
    try:
        check_model_dir(settings)
    except FileNotFoundError as exc:
        console.print(f"[red]error[/] {exc}")
        raise typer.Exit(2) from exc
    console.print(f"corrige: serving on [bold]http://{settings.host}:{settings.port}[/] (API docs at /docs)")
    run_server(settings)


@bench_app.command("model")
def bench_model(
    preset: Annotated[str, typer.Option(help="Model preset (random weights of that shape).")] = "seed",
    batches: Annotated[str, typer.Option(help="Comma-separated batch sizes.")] = "1,8,32",
    prompt_len: Annotated[int, typer.Option(help="Prompt tokens per request.")] = 24,
    new_tokens: Annotated[int, typer.Option(help="Greedy tokens generated per request.")] = 20,
    repeats: Annotated[int, typer.Option(help="Interleaved repetitions per batch size (medians are reported).")] = 15,
    reference: Annotated[bool, typer.Option(help="Also time transformers' generate (needs torch).")] = True,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here.")] = None,
) -> None:
    """NumPy runtime vs transformers `generate` on the same weights: prefill, decode step, request time."""
    from corrige.bench.model import run_model_bench

    run_model_bench(
        console,
        preset=preset,
        batches=[int(b) for b in batches.split(",")],
        prompt_len=prompt_len,
        new_tokens=new_tokens,
        repeats=repeats,
        reference=reference,
        output=output,
    )


@bench_app.command("engine")
def bench_engine(
    policies: Annotated[str, typer.Option(help="Comma-separated: none, threads, static, continuous.")] = (
        "none,threads,static,continuous"
    ),
    clients: Annotated[str, typer.Option(help="Comma-separated concurrent closed-loop clients.")] = "1,2,4,8,16,32,64",
    requests: Annotated[int, typer.Option(help="Measured requests per cell (0: max(320, 16 x clients)).")] = 0,
    duration: Annotated[float, typer.Option(help="Seconds per cell at most; requests in flight then finish.")] = 4.0,
    model: Annotated[Path | None, typer.Option(help="Trained model directory (default: random weights).")] = None,
    preset: Annotated[str, typer.Option(help="Preset of the random weights.")] = "seed",
    threads: Annotated[int, typer.Option(help="Worker threads of the threads policy.")] = 4,
    blas_threads: Annotated[int, typer.Option(help="BLAS threads (1 avoids spinning on small machines).")] = 1,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here.")] = None,
) -> None:
    """Serving policies under closed-loop load: requests/s, tokens/s, p50/p95 latency, batch size, overhead."""
    from corrige.bench.engine import run_engine_bench

    run_engine_bench(
        console,
        policies=[p.strip() for p in policies.split(",")],
        clients=[int(c) for c in clients.split(",")],
        requests=requests,
        duration=duration,
        model=model,
        preset=preset,
        threads=threads,
        blas_threads=blas_threads,
        output=output,
    )


@bench_app.command("http")
def bench_http(
    requests: Annotated[int, typer.Option(help="Measured corrections each way (HTTP and in process).")] = 400,
    warmup: Annotated[int, typer.Option(help="Unmeasured corrections first, each way.")] = 40,
    block: Annotated[int, typer.Option(help="Requests per block; HTTP and in-process blocks alternate.")] = 25,
    model: Annotated[Path | None, typer.Option(help="Model directory (default: the bundled tutor).")] = None,
    batching: Annotated[str, typer.Option(help="The server's and the in-process engine's policy.")] = "continuous",
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log", help="Server access log.")] = False,
    output: Annotated[Path | None, typer.Option(help="Write the results as Markdown here.")] = None,
    json_output: Annotated[Path | None, typer.Option("--json", help="Write the results as JSON here.")] = None,
) -> None:
    """One correction at a time through a real `corrige serve` vs the same pipeline in process: p50/p95, overhead."""
    from corrige.bench.http import run_http_bench

    run_http_bench(
        console, requests=requests, warmup=warmup, block=block, model=model, batching=batching,
        access_log=access_log, output=output, json_output=json_output,
    )


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
    mode: Annotated[str | None, typer.Option(help="hybrid | bm25 | dense (default: hybrid; bm25 without the model).")
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
        table.add_row(str(rank), h.card.id, f"{h.score:.4f}", str(h.bm25_rank or "–"), str(h.dense_rank or "–"),
                      h.card.title)
    console.print(table)
    for h in hits[:3]:
        ex = h.card.examples[0]
        console.print(f"[bold]{h.card.title}[/] ({h.card.label}, {h.card.level})\n  {h.card.explanation}\n"
                      f"  [red]✗[/] {ex.wrong}\n  [green]✓[/] {ex.right}")


@app.command("eval-retrieval")
def eval_retrieval(
    n_test: Annotated[int, typer.Option(help="Synthetic test examples to draw single-error queries from.")] = 900,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic corpus.")] = 0,
    misses: Annotated[int, typer.Option(help="Show up to this many hybrid misses (top 5).")] = 0,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here.")] = None,
) -> None:
    """Retrieval quality: recall@1/@5 of the right rule card for BM25, dense and hybrid retrieval."""
    import dataclasses
    import json
    import os

    from corrige.model.blas import limit_blas_threads

    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))  # before NumPy loads
    from rich.table import Table

    from corrige.tutor import retrieval_eval as reval
    from corrige.tutor.retrieval import Retriever

    retriever = Retriever.load()
    queries = reval.all_queries(n_test=n_test, seed=seed)
    report = reval.evaluate(retriever, queries)
    # Robustness: the same queries without their categories (a category the tutor missed, or CLI text).
    bare = [dataclasses.replace(q, query=dataclasses.replace(q.query, categories=())) for q in queries]
    bare_report = reval.evaluate(retriever, bare)
    results = {"with_categories": report.as_dict(), "without_categories": bare_report.as_dict(),
               "command": f"corrige eval-retrieval --n-test {n_test} --seed {seed}"}
    for name, rep in (("with categories (as served)", report), ("without categories", bare_report)):
        table = Table("queries", "n", *(f"{m} R@{k}" for m in rep.overall for k in reval.KS),
                      title=f"retrieval: {name}")
        rows = {**rep.by_source, "all": rep.overall}
        for source, recalls in rows.items():
            n = next(iter(recalls.values())).n
            table.add_row(source, str(n), *(f"{r.at(k):.3f}" for r in recalls.values() for k in reval.KS))
        console.print(table)
    console.print(f"{report.n_queries} queries, {report.n_pinned} with a pinned sub-rule "
                  "(the others accept any card of their category)")
    if "hybrid" in report.overall:
        h5 = report.overall["hybrid"].at(5)
        others = max(report.overall["bm25"].at(5), report.overall["dense"].at(5))
        met = h5 >= 0.95 and h5 > others
        results["target_met"] = met
        console.print(f"target hybrid R@5 ≥ 0.95 and above both: {'[green]met' if met else '[red]not met'}[/] "
                      f"({h5:.3f} vs best single {others:.3f})")
    for _, lq, top in report.misses[:misses]:
        console.print(f"[yellow]miss[/] {lq.source}: {lq.query.sentence!r} {list(lq.query.edits)} "
                      f"want {sorted(lq.relevant)} got {top}")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {output}")


@bench_app.command("retrieval")
def bench_retrieval(
    queries: Annotated[int, typer.Option(help="Evaluation queries to time (0: all).")] = 0,
    repeats: Annotated[int, typer.Option(help="Passes over the queries.")] = 1,
    blas_threads: Annotated[int, typer.Option(help="BLAS threads (the server's default is 1).")] = 1,
    output: Annotated[Path | None, typer.Option(help="Write the results as JSON here.")] = None,
) -> None:
    """Retriever.search latency per mode (bm25, dense, hybrid) over the evaluation queries: p50/p95/p99 ms."""
    import json
    import os
    import time

    from corrige.model.blas import limit_blas_threads

    how = limit_blas_threads(blas_threads)
    from rich.table import Table

    from corrige.tutor import retrieval_eval as reval
    from corrige.tutor.retrieval import Retriever

    t0 = time.perf_counter()
    retriever = Retriever.load()
    startup_s = time.perf_counter() - t0
    lq = reval.all_queries()
    lq = lq[:queries] if queries else lq
    stats = reval.latency_ms(retriever, lq, repeats=repeats)
    load = os.getloadavg()
    table = Table("mode", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", title="Retriever.search (k=5)")
    for mode, s in stats.items():
        table.add_row(mode, str(s["n"]), f"{s['p50_ms']:.2f}", f"{s['p95_ms']:.2f}", f"{s['p99_ms']:.2f}",
                      f"{s['mean_ms']:.2f}")
    console.print(table)
    console.print(f"start-up {startup_s:.2f} s (retriever build, embedding cache as found); BLAS threads "
                  f"{blas_threads} ({how}); {os.cpu_count()} CPUs; load average {load[0]:.2f}")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        result = {"latency": stats, "startup_s": round(startup_s, 3), "blas_threads": blas_threads,
                  "cpus": os.cpu_count(), "loadavg": [round(x, 2) for x in load], "mode": retriever.mode,
                  "command": f"corrige bench retrieval --queries {queries} --repeats {repeats}"}
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {output}")


if __name__ == "__main__":
    app()
