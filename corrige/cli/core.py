"""Everyday commands: version, train, correct, eval, serve."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corrige.cli import DEFAULT_MODEL, MODEL_HELP, _numpy_runtime_threads, app, console


@app.command()
def version() -> None:
    """Print the installed version."""
    from corrige import __version__

    console.print(f"corrige {__version__}")


@app.command()
def train(
    out: Annotated[Path, typer.Option(help="Output model directory.")] = Path("runs/seed"),
    preset: Annotated[
        str,
        typer.Option(
            help="Model preset: seed (~0.5M params), tutor (0.94M); for real text reader (2.6M) or reader-small (1.3M)."
        ),
    ] = "seed",
    minutes: Annotated[float, typer.Option(help="Wall-clock budget; the LR schedule ends with it.")] = 20.0,
    max_steps: Annotated[int, typer.Option(help="Step budget; the first budget to run out ends training.")] = 20_000,
    n_train: Annotated[int, typer.Option(help="Synthetic training examples.")] = 200_000,
    batch_size: Annotated[int, typer.Option()] = 64,
    lr: Annotated[float, typer.Option(help="Peak learning rate (AdamW, cosine decay).")] = 3e-3,
    seed: Annotated[int, typer.Option(help="Seed for initialisation and batch order.")] = 0,
    data_seed: Annotated[int, typer.Option(help="Seed of the synthetic corpus.")] = 0,
    eval_every: Annotated[int, typer.Option(help="Steps between dev evaluations.")] = 1_000,
    threads: Annotated[int, typer.Option(help="Torch threads (0: default).")] = 0,
    resume: Annotated[bool, typer.Option(help="Continue from OUT/checkpoint.pt if present.")] = False,
    pairs: Annotated[
        Path | None,
        typer.Option(help="Train on a pairs TSV from `corrige corpus pairs` instead of the synthetic corpus."),
    ] = None,
    pairs_limit: Annotated[int | None, typer.Option(help="Read at most this many rows of --pairs.")] = None,
    n_dev: Annotated[int, typer.Option(help="Held-out dev examples (the last rows of --pairs).")] = 2_000,
    bf16: Annotated[bool, typer.Option(help="bfloat16 autocast (2-3x faster where the CPU has AVX-512 BF16).")] = False,
    init_from: Annotated[
        Path | None,
        typer.Option(help="Start from this model directory's weights and tokenizer (e.g. corrige/models/reader)."),
    ] = None,
) -> None:
    """Train a tutor model with PyTorch (needs the `train` extra) and export it for the NumPy runtime."""
    try:
        from corrige.train.loop import TrainConfig
        from corrige.train.loop import train as run_training
    except ImportError as exc:  # torch missing
        raise typer.BadParameter(f"training needs torch: pip install -e '.[train]' ({exc})") from exc
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    cfg = TrainConfig(
        preset=preset,
        data_seed=data_seed,
        seed=seed,
        n_train=n_train,
        batch_size=batch_size,
        lr=lr,
        max_steps=max_steps,
        max_minutes=minutes,
        eval_every=eval_every,
        threads=threads,
        pairs=str(pairs) if pairs else None,
        pairs_limit=pairs_limit,
        n_dev=n_dev,
        bf16=bf16,
        init_from=str(init_from) if init_from else None,
    )
    with Progress(
        TextColumn("[bold]train"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TextColumn("step {task.fields[step]} loss {task.fields[loss]:.4f}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        task = bar.add_task("train", total=1.0, step=0, loss=float("nan"))
        result = run_training(
            cfg,
            out,
            resume=resume,
            on_step=lambda step, loss, progress: bar.update(task, completed=progress, step=step, loss=loss),
        )
    console.print(f"[green]trained[/] {result.steps} steps in {result.minutes:.1f} min → {result.out_dir}")
    for point in result.history:
        console.print(f"  step {point.step:>6}: dev loss {point.dev_loss:.4f}, dev exact {point.dev_exact:.3f}")


@app.command()
def correct(
    sentences: Annotated[list[str], typer.Argument(help="One or more English sentences to correct.")],
    model: Annotated[Path | None, typer.Option(help=MODEL_HELP)] = None,
) -> None:
    """Correct sentences and explain in Spanish: `corrige correct "Yesterday I goed to the store"`.

    Every sentence is tried; one the model cannot take (too long for its window) is reported in
    its place, and the exit code is 2 when any was.
    """
    _numpy_runtime_threads()
    from rich.markup import escape
    from rich.table import Table

    from corrige.tutor.agent import Tutor
    from corrige.tutor.codec import PromptTooLong

    tutor = Tutor.load(model)
    refused = 0
    for sentence in sentences:
        console.print(f"[bold]{escape(sentence)}[/]", highlight=False, soft_wrap=True)
        try:
            c = tutor.correct(sentence)
        except PromptTooLong as exc:
            refused += 1
            console.print(f"  [red]error[/] ({exc.code}): {escape(str(exc))}", highlight=False, soft_wrap=True)
            continue
        if c.abstained:
            console.print(f"  [yellow]sin cambios[/] ({c.abstain_reason}): {escape(c.gloss)}")
            continue
        mark = "[green]✓[/]" if not c.changed else "[cyan]→[/]"
        console.print(f"  {mark} {escape(c.corrected)}\n  [italic]{escape(c.gloss)}[/]")
        if c.edits:
            table = Table("start", "end", "original", "replacement", "category", box=None, padding=(0, 1))
            for e in c.edits:
                table.add_row(
                    str(e.start), str(e.end), escape(e.original) or "∅", escape(e.replacement) or "∅", e.category
                )
            console.print(table)
    if refused:
        console.print(f"[red]{refused} of {len(sentences)} sentences could not be corrected[/]")
        raise typer.Exit(2)


@app.command("eval")
def eval_cmd(
    file: Annotated[
        Path | None,
        typer.Argument(
            help="A parallel file to score with ERRANT: a TSV (source, reference or corrected; half) or an M2 file. "
            "Without it: the synthetic split and the hand-written sentences, with the tutor's own edit metric.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    model: Annotated[Path | None, typer.Option(help=MODEL_HELP)] = None,
    split: Annotated[str, typer.Option(help="Synthetic split: test or dev.")] = "test",
    n: Annotated[int, typer.Option(help="Synthetic sentences to evaluate.")] = 2000,
    realistic: Annotated[bool, typer.Option(help="Also evaluate the hand-written learner sentences.")] = True,
    sweep: Annotated[bool, typer.Option(help="Compare abstention thresholds on the same generations.")] = False,
    latency: Annotated[bool, typer.Option(help="Also time single corrections at batch 1.")] = True,
    card: Annotated[bool, typer.Option(help="Write MODEL_CARD.md and eval.json into the model directory.")] = False,
    min_token_prob: Annotated[float | None, typer.Option(help="Override the abstention threshold.")] = None,
    half: Annotated[str, typer.Option(help="With FILE: rows of its half column: tune, test or all.")] = "all",
    as_text: Annotated[
        bool,
        typer.Option(
            help="With FILE: correct each row as the tutor page and `text` requests do (a sentence too long "
            "for the window is cut at clause boundaries instead of refused)."
        ),
    ] = False,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write every figure as JSON.")] = None,
    predictions: Annotated[
        Path | None, typer.Option(help="With FILE: write source/prediction/reference/abstained/refused TSV rows.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(help="With --card: the corpus manifest.json, summarised into the card's data section."),
    ] = None,
    score_only: Annotated[
        Path | None,
        typer.Option(
            help="Score a predictions TSV (source, prediction, reference) with ERRANT; no model runs.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
) -> None:
    """Exact match, edit precision/recall/F0.5, false alarms, abstentions, per category.

    With FILE (or --score-only): ERRANT span-based correction P/R/F0.5, per ERRANT error type.
    """
    _numpy_runtime_threads()
    if card and file is None and _trained_on_pairs(model):
        from corrige.cli import errant_eval

        errant_eval.write_learner_card(console, model, corpus, min_token_prob)  # type: ignore[arg-type]
        return
    if file is not None or score_only is not None:
        from corrige.cli import errant_eval

        if half not in ("tune", "test", "all"):
            raise typer.BadParameter(f"--half must be tune, test or all, not {half!r}")
        try:
            errant_eval.run(
                console,
                file,
                model=model,
                half=half,
                json_path=json_path,
                predictions_path=predictions,
                score_only=score_only,
                sweep=sweep,
                min_token_prob=min_token_prob,
                as_text=as_text,
            )
        except ValueError as exc:
            console.print(f"[red]error[/] {exc}", soft_wrap=True)
            raise typer.Exit(2) from exc
        except (ImportError, OSError) as exc:  # errant, spaCy or its English pipeline missing
            console.print(
                f"[red]error[/] ERRANT scoring needs the eval extra: pip install -e '.[eval]' ({exc})", soft_wrap=True
            )
            raise typer.Exit(2) from exc
        return
    from dataclasses import asdict, replace

    from rich.progress import Progress
    from rich.table import Table

    from corrige.cli.errant_eval import print_table
    from corrige.tutor import assess
    from corrige.tutor.agent import BUNDLED_MODEL, Tutor

    tutor = Tutor.load(model)
    if min_token_prob is not None:
        tutor.config = replace(tutor.config, min_token_prob=min_token_prob)
    sets = {f"synthetic {split}": assess.synthetic_items(split, n=n)}
    if realistic:
        sets["realistic (hand-written)"] = assess.realistic_items()
    results: dict = {
        "sets": {},
        "params": tutor.weights.cfg.num_params(),
        "command": "corrige eval " + ("--card" if card else ""),
    }
    summary = Table("set", "n", "exact", "P", "R", "F0.5", "false alarms", "abstain", title="tutor evaluation")
    for name, items in sets.items():
        with Progress(console=console, transient=True) as bar:
            task = bar.add_task(name, total=len(items))
            generated = assess.generate_all(tutor, items, on_batch=lambda k, t=task: bar.advance(t, k))
        metrics = assess.score(generated, assess.interpret_all(tutor, generated))
        results["sets"][name] = {k: v for k, v in asdict(metrics).items() if k != "per_category"}
        if name.startswith("synthetic"):
            results["per_category"] = {k: asdict(v) for k, v in metrics.per_category.items()}
        summary.add_row(
            name,
            str(metrics.n),
            f"{metrics.exact_match:.3f}",
            f"{metrics.precision:.3f}",
            f"{metrics.recall:.3f}",
            f"{metrics.f05:.3f}",
            f"{metrics.false_alarm_rate:.3f}",
            f"{metrics.abstain_rate:.3f}",
        )
        if sweep:
            table = Table(
                "min token prob", "exact", "P", "F0.5", "false alarms", "abstain", title=f"threshold sweep: {name}"
            )
            for t, m in assess.threshold_sweep(tutor, generated, [0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.7]).items():
                table.add_row(
                    f"{t:.2f}",
                    f"{m.exact_match:.3f}",
                    f"{m.precision:.3f}",
                    f"{m.f05:.3f}",
                    f"{m.false_alarm_rate:.3f}",
                    f"{m.abstain_rate:.3f}",
                )
            print_table(console, table)
    print_table(console, summary)
    if "per_category" in results:
        cats = Table("category", "sentences", "exact", "recall", "precision", title="per category (synthetic)")
        for cat, c in sorted(results["per_category"].items()):
            if not c["sentences"]:
                continue
            cats.add_row(
                cat, str(c["sentences"]), f"{c['exact_match']:.3f}", f"{c['recall']:.3f}", f"{c['precision']:.3f}"
            )
        print_table(console, cats)
    if latency:
        sentences = [i.source for i in sets[f"synthetic {split}"][:100]]
        results["latency"] = assess.correction_latency_ms(tutor, sentences)
        lat = results["latency"]
        console.print(
            f"batch-1 correction: p50 {lat['p50_ms']:.2f} ms, p95 {lat['p95_ms']:.2f} ms "
            f"({lat['mean_prompt_tokens']:.1f} tokens in, {lat['mean_completion_tokens']:.1f} out)"
        )
    if card:
        from corrige.train.card import write_card

        syn = results["sets"][f"synthetic {split}"]
        targets = [
            {
                "name": "synthetic exact match ≥ 0.90",
                "value": f"{syn['exact_match']:.3f}",
                "met": syn["exact_match"] >= 0.9,
            },
            {"name": "synthetic edit F0.5 ≥ 0.90", "value": f"{syn['f05']:.3f}", "met": syn["f05"] >= 0.9},
            {
                "name": "synthetic false alarms ≤ 2%",
                "value": f"{syn['false_alarm_rate']:.3f}",
                "met": syn["false_alarm_rate"] <= 0.02,
            },
        ]
        real = results["sets"].get("realistic (hand-written)")
        if real:
            targets += [
                {"name": "realistic edit F0.5 ≥ 0.60", "value": f"{real['f05']:.3f}", "met": real["f05"] >= 0.6},
                {
                    "name": "realistic false alarms ≤ 5%",
                    "value": f"{real['false_alarm_rate']:.3f}",
                    "met": real["false_alarm_rate"] <= 0.05,
                },
            ]
        if latency:
            lat = results["latency"]
            targets.append(
                {
                    "name": "batch-1 correction ≤ 8 ms (p50)",
                    "value": f"{lat['p50_ms']:.2f} ms",
                    "met": lat["p50_ms"] <= 8,
                }
            )
        results["targets"] = targets
        path = write_card(Path(model) if model else BUNDLED_MODEL, results)
        console.print(f"[green]wrote[/] {path}")
    if json_path is not None:
        import json

        json_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {json_path}")


def _setting(*decls: str, help: str, default: str, env: str):
    """A `serve` option left unset defaults to its `CORRIGE_*` setting; the help says which and what the default is.

    The defaults are written here rather than read from `Settings` so that `--help` does not import the server.
    """
    return typer.Option(*decls, help=f"{help}  [default: {default}; env: CORRIGE_{env}]", show_default=False)


@app.command()
def serve(
    batching: Annotated[
        str | None, _setting(help="none | threads | static | continuous.", default="continuous", env="BATCHING")
    ] = None,
    host: Annotated[str | None, _setting(help="Address to listen on.", default="127.0.0.1", env="HOST")] = None,
    port: Annotated[int | None, _setting(help="Port to listen on.", default="8000", env="PORT")] = None,
    model: Annotated[Path | None, _setting(help="Model directory.", default=DEFAULT_MODEL, env="MODEL_DIR")] = None,
    max_batch: Annotated[
        int | None, _setting(help="Most requests in one model call.", default="32", env="MAX_BATCH")
    ] = None,
    max_waiting: Annotated[
        int | None, _setting(help="Queued requests beyond this get 503.", default="256", env="MAX_WAITING")
    ] = None,
    n_slots: Annotated[
        int | None, _setting(help="KV cache slots (requests in flight).", default="64", env="N_SLOTS")
    ] = None,
    threads: Annotated[
        int | None, _setting(help="Worker threads of --batching threads.", default="4", env="N_THREADS")
    ] = None,
    queue_timeout: Annotated[
        float | None,
        _setting(help="Seconds a request may wait for the model (504).", default="10", env="QUEUE_TIMEOUT_S"),
    ] = None,
    speculative_tokens: Annotated[
        int | None,
        _setting(
            help="Guessed tokens checked per request per step (prompt lookup); 0: off.",
            default="8",
            env="SPECULATIVE_TOKENS",
        ),
    ] = None,
    engine_process: Annotated[
        bool | None,
        _setting(
            "--engine-process/--engine-thread",
            help="Run the engine in a child process or a thread.",
            default="engine-process",
            env="ENGINE_PROCESS",
        ),
    ] = None,
    rate_limit: Annotated[
        float | None,
        _setting(
            help="Requests/s per client; 0 turns off every rate limit (load tests do).", default="20", env="RATE_LIMIT"
        ),
    ] = None,
    max_body_bytes: Annotated[
        int | None, _setting(help="Larger request bodies get 413.", default="65536", env="MAX_BODY_BYTES")
    ] = None,
    drain_grace: Annotated[
        float | None,
        _setting(help="Seconds in-flight requests get on SIGTERM.", default="10", env="DRAIN_GRACE_S"),
    ] = None,
    access_log: Annotated[
        bool | None,
        _setting("--access-log/--no-access-log", help="Log every request.", default="access-log", env="ACCESS_LOG"),
    ] = None,
    database_url: Annotated[
        str | None,
        _setting(
            help="The learner portal's records in PostgreSQL (postgresql://…; needs corrige[postgres]).",
            default="SQLite at PORTAL_DB",
            env="DATABASE_URL",
        ),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(
            help="Run N replicas behind Ray Serve's HTTP proxy on --host/--port (needs the cluster extra: "
            "pip install 'corrige[cluster]'); see docs/scaling.md.  [default: one server, no Ray]",
            min=1,
            show_default=False,
        ),
    ] = None,
    max_replicas: Annotated[
        int | None,
        typer.Option(help="With --replicas: autoscale between --replicas and this.  [default: --replicas]", min=1),
    ] = None,
    metrics_port: Annotated[
        int,
        typer.Option(help="With --replicas: each replica serves /metrics on the first free port from this one."),
    ] = 9100,
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
    if replicas is not None:
        overrides = {k: v for k, v in given.items() if v is not None}
        _serve_replicas(settings, overrides, replicas, max_replicas, metrics_port)
        return
    console.print(f"corrige: serving on [bold]http://{settings.host}:{settings.port}[/] (API docs at /docs)")
    run_server(settings)


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


def _trained_on_pairs(model: Path | None) -> bool:
    """A model trained on real sentences (its card is scored with ERRANT on the learner sets)."""
    import json

    meta = (model / "train_config.json") if model else None
    if meta is None or not meta.is_file():
        return False
    return bool(json.loads(meta.read_text()).get("train", {}).get("pairs"))
