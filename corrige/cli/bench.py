"""`corrige bench …`: benchmarks, medians and ratios measured side by side in one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from corrige.cli import bench_app, console
from corrige.cli.options import (
    ALL_POLICIES,
    Batching,
    Clients,
    JsonFlag,
    JsonOutput,
    ModelOption,
    Policies,
    ints,
    words,
    write_json,
)


@bench_app.command("model")
def bench_model(
    preset: Annotated[str, typer.Option(help="Model preset (random weights of that shape).")] = "seed",
    batches: Annotated[str, typer.Option(help="Comma-separated batch sizes.")] = "1,8,32",
    prompt_len: Annotated[int, typer.Option(help="Prompt tokens per request.")] = 24,
    new_tokens: Annotated[int, typer.Option(help="Greedy tokens generated per request.")] = 20,
    repeats: Annotated[int, typer.Option(help="Interleaved repetitions per batch size (medians are reported).")] = 15,
    reference: Annotated[bool, typer.Option(help="Also time transformers' generate (needs torch).")] = True,
    output: JsonOutput = None,
) -> None:
    """NumPy runtime vs transformers `generate` on the same weights: prefill, decode step, request time."""
    from corrige.bench.model import run_model_bench

    run_model_bench(
        console, preset=preset, batches=[int(b) for b in batches.split(",")], prompt_len=prompt_len,
        new_tokens=new_tokens, repeats=repeats, reference=reference, output=output,
    )  # fmt: skip


@bench_app.command("engine")
def bench_engine(
    policies: Policies = ALL_POLICIES,
    clients: Clients = "1,2,4,8,16,32,64",
    model: Annotated[Path | None, typer.Option(help="Trained model directory.  [default: random weights]")] = None,
    requests: Annotated[int, typer.Option(help="Measured requests per cell (0: max(320, 16 x clients)).")] = 0,
    duration: Annotated[float, typer.Option(help="Seconds per cell at most; requests in flight then finish.")] = 4.0,
    preset: Annotated[str, typer.Option(help="Preset of the random weights.")] = "seed",
    threads: Annotated[int, typer.Option(help="Worker threads of the threads policy.")] = 4,
    blas_threads: Annotated[int, typer.Option(help="BLAS threads (1 avoids spinning on small machines).")] = 1,
    output: JsonOutput = None,
) -> None:
    """Serving policies under closed-loop load: requests/s, tokens/s, p50/p95 latency, batch size, overhead."""
    from corrige.bench.engine import CellGrid, run_engine_bench

    grid = CellGrid(tuple(words(policies)), ints(clients), requests, duration)
    run_engine_bench(
        console, grid, model=model, preset=preset, threads=threads, blas_threads=blas_threads, output=output
    )


@bench_app.command("speculative")
def bench_speculative(
    policies: Annotated[str, typer.Option(help="Comma-separated: none, static, continuous.")] = "none,continuous",
    clients: Clients = "1,8,32,64",
    tokens: Annotated[int, typer.Option(help="Guessed tokens per request per step when on.")] = 8,
    budget: Annotated[int, typer.Option(help="Guessed tokens per step in all, shared by the requests.")] = 32,
    rounds: Annotated[int, typer.Option(help="Off/on pairs per cell (medians are reported).")] = 3,
    model: ModelOption = None,
    requests: Annotated[int, typer.Option(help="Measured requests per run (0: max(200, 8 x clients)).")] = 0,
    duration: Annotated[float, typer.Option(help="Seconds per run at most; requests in flight then finish.")] = 2.0,
    output: JsonOutput = None,
) -> None:
    """Prompt-lookup speculative decoding off vs on, in process, on real corrections: req/s, p50, steps."""
    from corrige.bench.engine import CellGrid
    from corrige.bench.speculative import run_speculative_bench

    grid = CellGrid(tuple(words(policies)), ints(clients), requests, duration)
    run_speculative_bench(console, grid, tokens, budget=budget, rounds=rounds, model=model, output=output)


@bench_app.command("scoring")
def bench_scoring(
    clients: Clients = "1,8",
    sentences: Annotated[int, typer.Option(help="Learner sentences, each scored with its candidates.")] = 200,
    candidates: Annotated[int, typer.Option(help="Candidate corrections per sentence at most.")] = 30,
    rounds: Annotated[int, typer.Option(help="Off/on pairs per client count (medians are reported).")] = 3,
    model: ModelOption = None,
    seed: Annotated[int, typer.Option(help="Which sentences and candidates.")] = 0,
    output: JsonOutput = None,
) -> None:
    """Scoring requests (each prompt token's log-probability), prefix reuse off vs on, in process:
    a sentence and its one-word candidate corrections, as a language model that judges them sends them."""
    from corrige.bench.scoring import run_scoring_bench

    run_scoring_bench(
        console, ints(clients), sentences, candidates, rounds=rounds, model=model, seed=seed, output=output
    )


@bench_app.command("http")
def bench_http(
    requests: Annotated[int, typer.Option(help="Measured corrections each way (HTTP and in process).")] = 400,
    warmup: Annotated[int, typer.Option(help="Unmeasured corrections first, each way.")] = 40,
    model: ModelOption = None,
    batching: Annotated[str, typer.Option(help="The server's and the in-process engine's policy.")] = "continuous",
    block: Annotated[int, typer.Option(help="Requests per block; HTTP and in-process blocks alternate.")] = 25,
    access_log: Annotated[bool, typer.Option("--access-log/--no-access-log", help="Server access log.")] = False,
    output: Annotated[Path | None, typer.Option(help="Write the results as Markdown here.")] = None,
    json_output: JsonFlag = None,
) -> None:
    """One correction at a time through a real `corrige serve` vs the same pipeline in process: p50/p95, overhead."""
    from corrige.bench.http import run_http_bench

    run_http_bench(
        console, requests=requests, warmup=warmup, block=block,
        model=model, batching=batching, access_log=access_log, output=output, json_output=json_output,
    )  # fmt: skip


@bench_app.command("text")
def bench_text(
    requests: Annotated[int, typer.Option(help="Measured corrections of each (the email, its sentence).")] = 200,
    warmup: Annotated[int, typer.Option(help="Unmeasured corrections of each first.")] = 20,
    batching: Batching = "continuous",
    model: ModelOption = None,
    json_output: JsonFlag = None,
) -> None:
    """A 150-word email (`text`) vs one of its sentences over HTTP, interleaved, 1 client: p50/p95 and their ratio."""
    from corrige.bench.servers import ServedBench
    from corrige.bench.text import run_text_bench

    run_text_bench(console, ServedBench(requests, warmup, model, batching, json_output))


@bench_app.command("retrieval")
def bench_retrieval(
    queries: Annotated[int, typer.Option(help="Evaluation queries to time (0: all).")] = 0,
    repeats: Annotated[int, typer.Option(help="Passes over the queries.")] = 1,
    blas_threads: Annotated[int, typer.Option(help="BLAS threads (the server's default is 1).")] = 1,
    output: JsonOutput = None,
) -> None:
    """Retriever.search latency per mode (bm25, dense, hybrid) over the evaluation queries: p50/p95/p99 ms."""
    import json
    import os
    import time

    from corrige.model.blas import limit_blas_threads

    how = limit_blas_threads(blas_threads)
    from rich.table import Table

    from corrige.evaluation import retrieval_eval as reval
    from corrige.tutor.retrieval import Retriever

    t0 = time.perf_counter()
    retriever = Retriever.load()
    startup_s = time.perf_counter() - t0
    lq = reval.all_queries()
    lq = lq[:queries] if queries else lq
    t0 = time.perf_counter()  # the first search after the load, as a server's first request without warm-up
    retriever.search_query(lq[0].query, k=5)
    first_ms = (time.perf_counter() - t0) * 1000
    stats = reval.latency_ms(retriever, lq, repeats=repeats)
    load = os.getloadavg()
    table = Table("mode", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", title="Retriever.search (k=5)")
    for mode, s in stats.items():
        table.add_row(
            mode, str(s["n"]), f"{s['p50_ms']:.2f}", f"{s['p95_ms']:.2f}", f"{s['p99_ms']:.2f}", f"{s['mean_ms']:.2f}"
        )
    console.print(table)
    console.print(
        f"start-up {startup_s:.2f} s (retriever build, embedding cache as found); first search "
        f"{first_ms:.2f} ms ({retriever.mode}); BLAS threads "
        f"{blas_threads} ({how}); {os.cpu_count()} CPUs; load average {load[0]:.2f}"
    )
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "latency": stats,
            "startup_s": round(startup_s, 3),
            "first_search_ms": round(first_ms, 3),
            "blas_threads": blas_threads,
            "cpus": os.cpu_count(),
            "loadavg": [round(x, 2) for x in load],
            "mode": retriever.mode,
            "command": f"corrige bench retrieval --queries {queries} --repeats {repeats}",
        }
        output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {output}")


@bench_app.command("observability")
def bench_observability(
    rounds: Annotated[int, typer.Option(min=1, help="Rounds; each runs both servers, in alternating order.")] = 5,
    latency_requests: Annotated[int, typer.Option(min=10, help="Requests per round at concurrency 1.")] = 200,
    clients: Annotated[int, typer.Option(min=2, help="Concurrency of the throughput run.")] = 32,
    load_requests: Annotated[int, typer.Option(min=10, help="Requests per round at --clients.")] = 800,
    batching: Annotated[str, typer.Option(help="Batching policy of both servers.")] = "continuous",
    model: ModelOption = None,
    output: JsonOutput = None,
) -> None:
    """What tracing + metrics cost: a server with both on vs one with both off, same run, medians and ratios."""

    from rich.table import Table

    from corrige.bench.observability import ObservabilityBenchConfig, run_observability_bench

    config = ObservabilityBenchConfig(
        rounds=rounds, latency_requests=latency_requests, load_clients=clients, load_requests=load_requests,
        policy=batching, model=model,
    )  # fmt: skip
    with console.status("starting two servers…") as status:
        result = run_observability_bench(config, progress=lambda what: status.update(what))
    med = result["medians"]
    table = Table(
        "tracing + metrics", "p50 ms (c=1)", "p95 ms (c=1)", f"req/s (c={clients})", "server CPU ms / correction",
        title="Observability cost",
    )  # fmt: skip
    for variant in ("on", "off"):
        m = med[variant]
        cpu = f"{m['cpu_ms']:.2f}" if m.get("cpu_ms") is not None else "–"
        table.add_row(variant, f"{m['p50_ms']:.2f}", f"{m['p95_ms']:.2f}", f"{m['req_per_s']:.0f}", cpu)
    console.print(table)
    lat, thr = result["latency_overhead"], result["throughput_loss"]
    console.print(
        f"latency overhead at c=1: {lat:+.1%} (target ≤ 10%: {'met' if lat <= 0.10 else 'not met'}); "
        f"throughput loss at c={clients}: {thr:+.1%} (target ≤ 5%: {'met' if thr <= 0.05 else 'not met'}); "
        f"medians of the paired ratios of {rounds} rounds (round by round: latency "
        f"{min(result['latency_overhead_rounds']):+.0%}..{max(result['latency_overhead_rounds']):+.0%}, throughput "
        f"{min(result['throughput_loss_rounds']):+.0%}..{max(result['throughput_loss_rounds']):+.0%})"
    )
    if result.get("cpu_overhead") is not None:
        rounds_cpu = result["cpu_overhead_rounds"]
        console.print(
            f"server CPU per correction at c={clients} (server and engine processes): {result['cpu_overhead']:+.1%} "
            f"with tracing + metrics (median of the paired rounds; {min(rounds_cpu):+.0%}..{max(rounds_cpu):+.0%})"
        )
    if output:
        write_json(output, result)


@bench_app.command("fuzz")
def bench_fuzz(
    minutes: Annotated[float, typer.Option(min=0.2, help="Time budget in all, split between the two runs.")] = 10.0,
    seed: Annotated[int, typer.Option(help="Seed of the generated requests (the same seed, the same run).")] = 0,
    url: Annotated[str | None, typer.Option(help="Fuzz this server instead of starting one (rate limits off).")] = None,
    model: ModelOption = None,
    output: JsonOutput = None,
) -> None:
    """schemathesis, every check, over the whole OpenAPI document of a real server: anonymous, then
    with a learner's portal session; server errors and departures from the document, per run."""
    import json

    from rich.table import Table

    from corrige.bench.fuzz import FuzzConfig, fuzz_server, run_fuzz_bench

    config = FuzzConfig(max_examples=None, max_time_s=minutes * 60 / 2, seed=seed)
    with console.status("fuzzing…") as status:
        if url is None:
            result = run_fuzz_bench(config, model, progress=lambda what: status.update(what))
        else:
            result = {"config": vars(config), "url": url, **fuzz_server(url.rstrip("/"), config)}
    table = Table(
        "run", "ops", "test cases", "5xx", "failures", "errors", "min", "exit",
        title=f"schemathesis over the OpenAPI document (seed {seed})",
    )  # fmt: skip
    for run in result["runs"]:
        table.add_row(
            run["label"], str(run["operations_tested"]), f"{run['test_cases']:,}", str(run["server_errors"]),
            str(run["unique_failures"]), str(len(run["errors"])), f"{run['wall_s'] / 60:.1f}", str(run["exit_code"]),
        )  # fmt: skip
    console.print(table)
    for run in result["runs"]:
        for kind, count in run["failures"].items():
            console.print(f"[red]{run['label']}: {kind}: {count}[/] ({', '.join(run['failing_operations'])})")
        if run["failures"] or run["errors"]:
            console.print(run["output_tail"][-4000:], markup=False, highlight=False)
    verdict = "[green]clean[/]" if result["clean"] else "[red]not clean[/]"
    console.print(f"{verdict}: {result['test_cases']:,} test cases, {result['unique_failures']} failures")
    if output:
        output.parent.mkdir(parents=True, exist_ok=True)
        kept = {**result, "runs": [{k: v for k, v in r.items() if k != "output_tail"} for r in result["runs"]]}
        output.write_text(json.dumps(kept, indent=2, default=str) + "\n", encoding="utf-8")
        console.print(f"[green]wrote[/] {output}")
    if not result["clean"]:
        raise typer.Exit(1)
