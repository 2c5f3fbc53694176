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

console = Console()


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at DEBUG level.")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


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


if __name__ == "__main__":
    app()
