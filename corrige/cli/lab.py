"""The serving lab: `corrige bench load`, `corrige bench sweep`, `corrige capacity` and `corrige bench replicas`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from corrige.cli import DEFAULT_MODEL, app, bench_app, console
from corrige.cli.options import (
    ALL_POLICIES,
    Clients,
    JsonOutput,
    ModelOption,
    Policies,
    SloMs,
    ints,
    progress_bar,
    quiet_libraries,
    wide,
    write_json,
)

if TYPE_CHECKING:
    from corrige.bench.capacity import Curve
    from corrige.bench.sweep import SweepConfig


@bench_app.command("load")
def bench_load(
    url: Annotated[str, typer.Option(help="The server (loopback only: 127.0.0.1 or localhost).")] = (
        "http://127.0.0.1:8000"
    ),
    mode: Annotated[str, typer.Option(help="closed: N clients back to back; open: arrivals at --rate.")] = "closed",
    clients: Annotated[int, typer.Option(help="Closed loop: concurrent clients.")] = 8,
    rate: Annotated[float, typer.Option(help="Open loop: arrivals per second.")] = 50.0,
    arrival: Annotated[str, typer.Option(help="Open loop: poisson, or gamma (bursty gaps).")] = "poisson",
    burstiness: Annotated[float, typer.Option(help="Gamma arrivals: coefficient of variation of the gaps.")] = 2.0,
    requests: Annotated[int, typer.Option(help="Measured requests at most.")] = 400,
    duration: Annotated[float, typer.Option(help="Seconds of sending at most.")] = 30.0,
    warmup: Annotated[int, typer.Option(help="Unmeasured requests first (closed: per client).")] = 1,
    stream: Annotated[bool, typer.Option(help="Ask for SSE: measures time to first token and token gaps.")] = False,
    rules: Annotated[
        bool | None, typer.Option("--rules/--no-rules", help="Ask for rule cards (default: the server's default).")
    ] = None,
    slo_ms: SloMs = 500.0,
    slo_ttft_ms: Annotated[float | None, typer.Option(help="Goodput with --stream: first token within this.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the sentence mix and the arrival times.")] = 0,
    timeout: Annotated[float, typer.Option(help="Seconds before a request counts as a timeout.")] = 60.0,
    model: Annotated[
        Path | None,
        typer.Option(
            help=f"The model the server runs (only sentences it accepts are sent).  [default: {DEFAULT_MODEL}]"
        ),
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the summary and every request as JSON here.")] = None,
) -> None:
    """Load-test a running server: p50/p95/p99, req/s, tokens/s, errors, goodput.

    Closed loop: each client sends its next sentence when the last returns.
    Open loop: Poisson or bursty gamma arrivals at a fixed rate, with
    Little's law checked (time-average in flight against λ·W).
    Sentences come from the tutor's test split, with a long tail of lengths.
    """
    from corrige.bench.load import LoadSpec, NotLoopback, check_loopback, run_load
    from corrige.bench.report import load_lines, load_table

    quiet_libraries()
    try:
        check_loopback(url)
        spec = LoadSpec(
            url, mode=mode, clients=clients, rate=rate, arrival=arrival, burstiness=burstiness,
            requests=requests, duration=duration, warmup=warmup, stream=stream, rules=rules,
            slo_ms=slo_ms, slo_ttft_ms=slo_ttft_ms, seed=seed, timeout_s=timeout, model=model,
        )  # fmt: skip
    except NotLoopback as exc:
        console.print(f"[red]error[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from exc
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    what = f"{clients} clients" if mode == "closed" else f"{rate:g}/s {arrival}"
    with progress_bar() as progress:
        task = progress.add_task(f"{mode} loop, {what}", total=requests)
        run = run_load(spec, on_result=lambda _: progress.advance(task))
    summary = run.summary()
    if not summary["requests"]:
        console.print("[red]no request was measured[/]")
        raise typer.Exit(1)
    if output:
        write_json(output, run.to_json())
    console.print(f"{url}{spec.path}, sentences from the tutor's test split")
    console.print(load_table(summary, f"{mode} loop, {what}"))
    for line in load_lines(summary):  # the last says so when the server's rate limit refused requests
        console.print(line, soft_wrap=True)
    if summary["ok"] == 0:
        raise typer.Exit(1)


@bench_app.command("sweep")
def bench_sweep(
    policies: Policies = ALL_POLICIES,
    clients: Clients = "1,2,4,8,16,32,64",
    per_client: Annotated[int, typer.Option(help="Measured requests per client at each point.")] = 8,
    min_requests: Annotated[int, typer.Option(help="...but at least this many per point.")] = 48,
    max_seconds: Annotated[float, typer.Option(help="Seconds of measuring per point at most.")] = 6.0,
    dod_clients: Annotated[int, typer.Option(help="The seed's done: p95 < 5 s at this many clients (0: skip).")] = 10,
    peer: Annotated[bool, typer.Option(help="Also measure a transformers `generate` server (needs torch).")] = False,
    model: ModelOption = None,
    seed: Annotated[int, typer.Option(help="Seed of the sentence mix.")] = 0,
    slo_ms: SloMs = 300.0,
    stream: Annotated[bool, typer.Option(help="Stream (SSE) every request, to record time to first token.")] = False,
    rules: Annotated[
        bool | None,
        typer.Option("--rules/--no-rules", help="Ask for rule cards (default: the server's; the peer has none)."),
    ] = None,
    output: JsonOutput = None,
    plot: Annotated[Path | None, typer.Option(help="Write the latency and throughput figure (PNG) here.")] = None,
    markdown: Annotated[Path | None, typer.Option(help="Write the tables as Markdown here.")] = None,
) -> None:
    """Clients x batching policies against real `corrige serve` processes.

    Prints the seed's table (clients x p50 per policy), p95 and throughput,
    where the time goes at the largest client count, the lab's targets and
    the seed's definition of done (p95 < 5 s at 10 clients). With --peer, a
    minimal FastAPI + transformers `generate` server on the same weights
    runs the same workload in the same run; ours is reported as ratios to it.
    """
    from corrige.bench.report import sweep_markdown, sweep_notes, sweep_tables
    from corrige.bench.sweep import SweepConfig

    quiet_libraries()
    try:
        config = SweepConfig(
            policies=tuple(p.strip() for p in policies.split(",") if p.strip()), clients=ints(clients),
            per_client=per_client, min_requests=min_requests, max_seconds=max_seconds, dod_clients=dod_clients,
            peer=peer, model=model, seed=seed, slo_ms=slo_ms, stream=stream, rules=rules,
        )  # fmt: skip
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            console.print("[red]error[/] --plot needs matplotlib: pip install -e '.[bench]'")
            raise typer.Exit(2) from exc
    result = _sweep_with_progress(config)
    for table in sweep_tables(result):
        wide().print(table)
    for note in sweep_notes(result):
        console.print(note, soft_wrap=True)
    if output:
        write_json(output, result)
    if markdown:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(sweep_markdown(result), encoding="utf-8")
        console.print(f"[green]wrote[/] {markdown}")
    if plot:
        from corrige.bench.plots import sweep_plot

        console.print(f"[green]wrote[/] {sweep_plot(result, plot)}")


def _sweep_with_progress(config: SweepConfig) -> dict:
    """Run the sweep under two bars: the points done of all, and the requests of the point running."""
    from corrige.bench.peer import PeerUnavailable
    from corrige.bench.sweep import SweepHooks, run_sweep

    n_servers = len(config.policies) + int(config.peer)
    with progress_bar() as progress:
        overall = progress.add_task("starting servers", total=len(config.client_counts()) * n_servers)
        current = progress.add_task("", total=None, visible=False)

        def started(server: str, n: int, requests: int) -> None:
            progress.update(overall, description=f"{server} x {n} clients")
            progress.reset(current, total=requests, description="  measured requests", visible=True)

        hooks = SweepHooks(
            point_started=started,
            request_done=lambda _: progress.advance(current),
            point_done=lambda _: progress.advance(overall),
            servers_ready=lambda names: progress.update(overall, description=f"ready: {', '.join(names)}"),
        )
        try:
            return run_sweep(config, hooks)
        except PeerUnavailable as exc:
            console.print(f"[red]error[/] {exc}", soft_wrap=True)
            raise typer.Exit(2) from exc


@app.command("capacity")
def capacity(
    sweep: Annotated[
        Path | None, typer.Option(help="A `corrige bench sweep --output` JSON to plan from (default: measure now).")
    ] = None,
    policy: Annotated[str, typer.Option(help="The batching policy to plan for.")] = "continuous",
    p95_ms: Annotated[float, typer.Option(help="The target p95 latency of admitted requests.")] = 300.0,
    rates: Annotated[
        str, typer.Option(help="Comma-separated arrival rates to size for (default: 50-95% of max).")
    ] = "",
    concurrency: Annotated[
        int, typer.Option(help="Requests one step runs (0: the policy's default: none 1, threads 4, else 32).")
    ] = 0,
    clients: Annotated[str, typer.Option(help="When measuring: closed-loop client counts.")] = "1,2,4,8,16,32,64",
    verify_rate: Annotated[
        float, typer.Option(help="Then run an open-loop Poisson load at this rate and compare (0: skip).")
    ] = 0.0,
    verify_requests: Annotated[int, typer.Option(help="Requests of the verification run.")] = 1500,
    model: Annotated[
        Path | None, typer.Option(help=f"Model directory for the servers started here.  [default: {DEFAULT_MODEL}]")
    ] = None,
    output: Annotated[Path | None, typer.Option(help="Write the plan (and the verification) as JSON here.")] = None,
) -> None:
    """Largest sustainable rate, and the queue bound for a target p95.

    Model: a flow-equivalent server. A closed-loop sweep measures the
    throughput X(n) and the latency distribution with n requests inside.
    With Poisson arrivals the number inside is a birth-death chain served at
    X(n): the largest sustainable rate is the saturation throughput, and the
    bound K (running + waiting) is the largest that keeps the admitted
    requests' p95 on target. See corrige/bench/capacity.py.
    """
    from corrige.bench.capacity import POLICY_CONCURRENCY, Curve, capacity_report

    quiet_libraries()
    if policy not in POLICY_CONCURRENCY:
        raise typer.BadParameter(f"policy must be one of {', '.join(POLICY_CONCURRENCY)}")
    if sweep is not None:
        data = json.loads(sweep.read_text(encoding="utf-8"))
        source = str(sweep)
    else:
        from corrige.bench.sweep import SweepConfig, run_sweep

        console.print(f"measuring the {policy} curve (closed loop, clients {clients}) on a fresh server…")
        data = run_sweep(SweepConfig(policies=(policy,), clients=ints(clients), dod_clients=0, model=model))
        source = "measured now"
    try:
        curve = Curve.from_sweep(data, policy)
    except ValueError as exc:
        console.print(f"[red]error[/] {exc}", soft_wrap=True)
        raise typer.Exit(2) from exc
    wanted = [float(r) for r in rates.split(",") if r.strip()] or None
    report = capacity_report(curve, p95_ms, policy, wanted, concurrency or None)
    report["source"] = source
    _print_plan(report, policy, p95_ms, source)
    if verify_rate > 0:
        report["verification"] = _verify_plan(curve, report, policy, model, verify_rate, verify_requests, p95_ms)
    if output:
        write_json(output, report)


def _print_plan(report: dict, policy: str, p95_ms: float, source: str) -> None:
    """The saturation rate, the largest rate on target without a bound, and the bound table."""
    from corrige.bench.report import capacity_table

    console.print(
        f"{policy}: measured saturation throughput (largest sustainable rate) [bold]{report['mu_max']:.0f} req/s[/]"
        f" (curve from {source})"
    )
    best = report["max_rate_for_target"]
    console.print(
        f"largest Poisson rate with p95 <= {p95_ms:g} ms and no bound: "
        + (f"[bold]{best:.0f} req/s[/] ({best / report['mu_max']:.0%} of saturation)" if best else "none")
    )
    wide().print(capacity_table(report))
    console.print(
        f"bound K = requests in the server (running + waiting); max_waiting = K - {report['concurrency']} "
        "(what one step runs); arrivals finding K inside get 503 overloaded",
        soft_wrap=True,
    )


def _verify_plan(
    curve: Curve, report: dict, policy: str, model: Path | None, verify_rate: float, verify_requests: int, p95_ms: float
) -> dict:
    """An open-loop Poisson run at `verify_rate` against a fresh server, set beside the model's prediction."""
    from corrige.bench.capacity import CapacityModel
    from corrige.bench.load import LoadSpec, run_load
    from corrige.bench.report import load_lines
    from corrige.bench.servers import LabServer
    from corrige.server.settings import Settings

    bound = Settings().max_waiting + report["concurrency"]  # what the server started here refuses beyond
    with LabServer.corrige(policy, model) as server, progress_bar() as progress:
        task = progress.add_task(f"verify: Poisson {verify_rate:g}/s", total=verify_requests)
        spec = LoadSpec(
            server.url,
            mode="open",
            rate=verify_rate,
            requests=verify_requests,
            duration=120.0,
            slo_ms=p95_ms,
            model=model,
        )
        run = run_load(spec, on_result=lambda _: progress.advance(task))
    summary = run.summary()
    for line in load_lines(summary):
        console.print(line, soft_wrap=True)
    measured = summary["latency_ms"] or {}
    little = summary.get("little") or {}
    arrived = little.get("lambda_per_s", verify_rate)  # the Poisson draw's own rate, not the asked one
    predicted = CapacityModel(curve).predict(arrived, bound)
    console.print(
        f"model vs measured at the measured arrival rate {arrived:.1f}/s (server bound K={bound}): "
        f"p95 {predicted.p95_ms:.1f} vs "
        f"{measured.get('p95', float('nan')):.1f} ms, mean latency {predicted.W_ms:.1f} vs "
        f"{measured.get('mean', float('nan')):.1f} ms, L {predicted.L:.2f} vs {little.get('L', float('nan')):.2f}",
        soft_wrap=True,
    )
    return {
        "rate": verify_rate,
        "arrival_rate": arrived,
        "predicted": predicted.as_dict(),
        "measured": summary,
    }


@bench_app.command("replicas")
def bench_replicas(
    replicas: Annotated[int, typer.Option(help="Replicas under Ray Serve.")] = 2,
    clients: Annotated[int, typer.Option(help="Closed-loop clients, the same against both.")] = 8,
    requests: Annotated[int, typer.Option(help="Measured requests per side.")] = 600,
    duration: Annotated[float, typer.Option(help="Seconds of load per side at most.")] = 60.0,
    kill_duration: Annotated[float, typer.Option(help="Seconds of load around the killed replica.")] = 60.0,
    answers: Annotated[int, typer.Option(help="Sentences whose corrections must be the same on both.")] = 100,
    model: ModelOption = None,
    output: Annotated[Path | None, typer.Option(help="Write every figure as JSON here.")] = None,
) -> None:
    """One server against N replicas behind Ray Serve (needs corrige[cluster]): same answers, p50 side
    by side (the proxy's cost), and one replica killed under load (none lost, under 1% failed, replaced)."""
    try:
        import ray  # noqa: F401
    except ImportError as exc:
        console.print(f"[red]error[/] bench replicas needs Ray Serve: pip install 'corrige[cluster]' ({exc})")
        raise typer.Exit(2) from exc
    from rich.table import Table

    from corrige.bench.replicas import run_replicas_bench

    quiet_libraries()
    with console.status(f"one server, then {replicas} replicas under Ray Serve (minutes)"):
        result = run_replicas_bench(replicas, clients, requests, duration, kill_duration, answers, model)
    table = Table("", "p50 ms", "p95 ms", "req/s", "ok / sent", "load average (before → after)", box=None)
    rows = [
        (f"{label}, {n} client{'s' if n > 1 else ''}", key if n == clients else f"{key}_1_client")
        for n in (clients, 1)
        for label, key in (("one server", "one_server"), (f"{replicas} replicas, Ray Serve", "ray_serve"))
    ]
    for label, key in rows:
        side = result[key]
        load = side["load_average"]
        table.add_row(
            label,
            f"{side['p50_ms']:.1f}",
            f"{side['p95_ms']:.1f}",
            f"{side['req_per_s']:.1f}",
            f"{side['ok']} / {side['requests']}",
            f"{load['before']:.2f} → {load['after']:.2f}",
        )
    console.print(table)
    console.print(
        f"p50 ratio at {clients} clients {result['p50_ratio']:.2f}; "
        f"proxy at 1 client +{result['proxy_ms_1_client']:.1f} ms; same answers {result['answers']['same']} / "
        f"{result['answers']['sentences']}; replica metrics ports {result['metrics_ports']}"
    )
    kill = result["kill"]
    console.print(
        f"killed replica pid {kill['killed_pid']} under {kill['clients']} clients: {kill['requests']} requests, "
        f"{kill['lost']} lost, {kill['failed']} failed ({100 * kill['failed_share']:.2f}%: {kill['errors']}), "
        f"replaced {kill['replaced']} after {kill['back_after_s']} s",
        soft_wrap=True,
    )
    for name, met in result["targets"].items():
        console.print(f"  {'[green]met[/]' if met else '[red]missed[/]'} {name}")
    if output:
        write_json(output, result)
