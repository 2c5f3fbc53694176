"""The `corrige` command line. Heavy imports happen inside commands so `--help` is instant.

The commands live in one module per area; each adds itself to `app` or a sub-app here:
`core` (version, train, correct, eval), `serve`, `bench` (benchmarks), `rules` (knowledge base),
`corpus` (training sentences).
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer
from rich.console import Console

# Plain click help, for every sub-app too (they inherit the root's mode): flags read `--x / --no-x`
# with their default and no `<bool>` tag (typer's rich panels tag every flag), and `[default: …]`
# in a help text is text, not rich markup.
app = typer.Typer(
    help="corrige: a grammar tutor for Spanish speakers learning English, served by a tiny GPT on a CPU.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
bench_app = typer.Typer(help="Benchmarks: medians and ratios, measured side by side in one run.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
rules_app = typer.Typer(help="Grammar rule cards: search the knowledge base.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
corpus_app = typer.Typer(help="Training corpus: clean English sentences from licensed sources.", no_args_is_help=True)
app.add_typer(corpus_app, name="corpus")
lm_app = typer.Typer(help="The language model that scores candidate corrections.", no_args_is_help=True)
app.add_typer(lm_app, name="lm")

console = Console()

# Which model a command runs when --model is not given; "the bundled tutor" read like corrige/models/tutor.
DEFAULT_MODEL = "the bundled reader model, corrige/models/reader"
MODEL_HELP = f"Model directory.  [default: {DEFAULT_MODEL}]"


@app.callback()
def main(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at DEBUG level.")] = False) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")


def _numpy_runtime_threads() -> None:
    """One BLAS thread (CORRIGE_BLAS_THREADS overrides): the runtime's matmuls are too small to
    share, and a second BLAS thread fighting a busy core slows them many times over."""
    import os

    from corrige.model.blas import limit_blas_threads

    limit_blas_threads(int(os.environ.get("CORRIGE_BLAS_THREADS", "1")))


# Each module registers its commands; `corrige --help` lists them in that order (serve after eval).
# isort: off
from corrige.cli import bench, compare, core, serve  # noqa: E402,F401
from corrige.cli import corpus, lab, limits, lm, obs, traces_bench  # noqa: E402,F401
from corrige.cli import portal, rules, soak, tool  # noqa: E402,F401
# isort: on
