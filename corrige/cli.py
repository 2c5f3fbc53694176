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


if __name__ == "__main__":
    app()
