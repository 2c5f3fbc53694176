"""`corrige bench model`: the NumPy runtime against transformers' GPT-2 on the same weights.

For each batch size, one request is a `prompt_len`-token prompt per row followed by
`new_tokens` greedy tokens. Each repetition times, back to back (A, B, A, B, ..):

* ours: `prefill`, then `new_tokens - 1` `decode` steps, argmax in between;
* transformers, by hand: one forward over the prompts (its prefill), then one forward per
  token with its KV cache (its decode step), so step times compare one to one;
* transformers `generate` (greedy, exactly `new_tokens` tokens): its request time.

Figures are medians over repetitions; a ratio is the median of the per-repetition ratios
(transformers / ours), which a slow spell on a shared machine moves less than the medians.
"""

from __future__ import annotations

import inspect
import logging
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from corrige.bench.machine import machine_info, numpy_blas, write_json
from corrige.model.blas import blas_threads_limited
from corrige.model.config import GPTConfig
from corrige.model.config import preset as preset_config
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, decode, prefill, prepare
from corrige.model.weights import random_params, save_model

log = logging.getLogger(__name__)

WARMUP = 1  # untimed repetitions per batch size and implementation


@dataclass
class Timing:
    """One implementation at one batch size: a list of seconds per repetition."""

    prefill: list[float] = field(default_factory=list)
    step: list[float] = field(default_factory=list)  # median decode step of each repetition
    request: list[float] = field(default_factory=list)

    def add(self, prefill_s: float, steps: list[float], request_s: float) -> None:
        self.prefill.append(prefill_s)
        self.step.append(statistics.median(steps))
        self.request.append(request_s)

    def summary(self, batch: int, new_tokens: int) -> dict[str, float]:
        request = statistics.median(self.request)
        return {
            "prefill_ms": 1e3 * statistics.median(self.prefill),
            "decode_step_ms": 1e3 * statistics.median(self.step),
            "request_ms": 1e3 * request,
            "tokens_per_s": batch * new_tokens / request,
        }


def _paired_ratio(theirs: list[float], ours: list[float]) -> float:
    return statistics.median(t / o for t, o in zip(theirs, ours, strict=True))


def _run_numpy(w: RuntimeWeights, cache: KVCache, prompts: list[list[int]], new_tokens: int):
    """One request batch on the NumPy runtime: (prefill s, decode step s list, total s, tokens)."""
    B, P = len(prompts), len(prompts[0])
    slots = list(range(B))
    start = time.perf_counter()
    logits = prefill(w, cache, prompts, slots)
    prefill_s = time.perf_counter() - start
    tokens = np.argmax(logits, axis=-1)
    generated = [tokens]
    steps = []
    for i in range(1, new_tokens):
        t0 = time.perf_counter()
        logits = decode(w, cache, tokens, slots, [P + i - 1] * B)
        steps.append(time.perf_counter() - t0)
        tokens = np.argmax(logits, axis=-1)
        generated.append(tokens)
    total = time.perf_counter() - start
    return prefill_s, steps, total, np.stack(generated, axis=1)


def _cache_name(model) -> str:
    """The forward argument (and output field) for the KV cache: `cache` in transformers 5, else `past_key_values`."""
    return "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"


def _run_torch_steps(torch, model, ids, new_tokens: int):
    """transformers by hand: (prefill s, decode step s list) with the KV cache it returns."""
    B = ids.shape[0]
    name = _cache_name(model)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        t0 = time.perf_counter()
        out = model(input_ids=ids, attention_mask=mask, use_cache=True)
        prefill_s = time.perf_counter() - t0
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        steps = []
        for _ in range(1, new_tokens):
            mask = torch.cat([mask, mask.new_ones(B, 1)], dim=1)
            t0 = time.perf_counter()
            out = model(input_ids=token, attention_mask=mask, use_cache=True, **{name: getattr(out, name)})
            steps.append(time.perf_counter() - t0)
            token = out.logits[:, -1].argmax(-1, keepdim=True)
    return prefill_s, steps


def _run_torch_generate(torch, model, ids, new_tokens: int):
    """transformers `generate`, greedy, exactly `new_tokens` tokens: (total s, tokens)."""
    with torch.inference_mode():
        t0 = time.perf_counter()
        out = model.generate(
            ids,
            attention_mask=torch.ones_like(ids),
            max_new_tokens=new_tokens,
            min_new_tokens=new_tokens,
            do_sample=False,
            pad_token_id=0,
        )
        total = time.perf_counter() - t0
    return total, out[:, ids.shape[1] :].numpy()


def _import_reference():
    """torch and transformers, imported late: OpenMP must be told to sleep, not spin, first.

    torch's OpenMP workers otherwise spin after each op and starve NumPy on a small machine.
    """
    if "torch" in sys.modules and os.environ.get("OMP_WAIT_POLICY", "").upper() != "PASSIVE":
        log.warning("torch was imported without OMP_WAIT_POLICY=PASSIVE; its idle threads may slow NumPy")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise RuntimeError(
            f"the transformers reference needs torch and transformers ({exc}); "
            "install them with `pip install -e '.[dev]'` or run with --no-reference"
        ) from exc
    return torch, transformers


def _describe_machine(info: dict[str, Any]) -> str:
    parts = [f"{info['cpu']}, {info['usable_cores']} of {info['cores']} cores", f"numpy {info['numpy']}"]
    parts += numpy_blas(info)
    if "torch" in info:
        parts.append(f"torch {info['torch']} ({info['torch_threads']} threads)")
    return ", ".join(parts)


def _check_args(cfg: GPTConfig, batches: list[int], prompt_len: int, new_tokens: int, repeats: int) -> None:
    if not batches or min(batches) < 1:
        raise ValueError("batch sizes must be positive")
    if prompt_len < 1 or repeats < 1:
        raise ValueError("prompt_len and repeats must be positive")
    if new_tokens < 2:
        raise ValueError("new_tokens must be at least 2: one from the prefill, then decode steps")
    if prompt_len + new_tokens > cfg.n_ctx:
        raise ValueError(f"{prompt_len} + {new_tokens} tokens do not fit the {cfg.n_ctx}-token window")


def _table(results: list[dict[str, Any]], reference: bool) -> Table:
    title = "NumPy runtime vs transformers (medians; ratio = transformers / ours, paired)"
    table = Table(title=title if reference else "NumPy runtime (medians)")
    table.add_column("batch", justify="right")
    table.add_column("")
    table.add_column("ours", justify="right")
    if reference:
        table.add_column("transformers", justify="right")
        table.add_column("ratio", justify="right")
    rows = [
        ("prefill", "prefill_ms", "ms", "prefill"),
        ("decode step", "decode_step_ms", "ms", "decode_step"),
        ("request", "request_ms", "ms", "request"),
        ("tokens/s", "tokens_per_s", "", None),
    ]
    for r in results:
        for i, (label, key, unit, ratio_key) in enumerate(rows):
            cells = [str(r["batch"]) if i == 0 else "", label, _fmt(r["ours"][key], unit)]
            if reference:
                ratio = r["ratios"].get(ratio_key) if ratio_key else None
                cells += [_fmt(r["transformers"][key], unit), f"{ratio:.2f}x" if ratio else ""]
            table.add_row(*cells, end_section=i == len(rows) - 1)
    return table


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.3f} ms" if value < 10 else f"{value:.1f} ms"
    return f"{value:,.0f}"


def _bench_batch(w, cfg: GPTConfig, B: int, prompts, new_tokens: int, repeats: int, torch, model, advance):
    """Interleaved repetitions at one batch size; returns its entry of the report."""
    cache = KVCache.allocate(cfg, B)
    ids = torch.tensor(prompts) if model is not None else None
    ours, theirs = Timing(), Timing()
    same_tokens = None
    for rep in range(WARMUP + repeats):
        prefill_s, steps, total, our_tokens = _run_numpy(w, cache, prompts, new_tokens)
        if model is not None:
            hf_prefill, hf_steps = _run_torch_steps(torch, model, ids, new_tokens)
            hf_total, hf_tokens = _run_torch_generate(torch, model, ids, new_tokens)
            same_tokens = bool(np.array_equal(our_tokens, hf_tokens))
        if rep >= WARMUP:
            ours.add(prefill_s, steps, total)
            if model is not None:
                theirs.add(hf_prefill, hf_steps, hf_total)
        advance()
    result: dict[str, Any] = {"batch": B, "ours": ours.summary(B, new_tokens)}
    raw = {"ours": asdict(ours)}
    if model is not None:
        result["transformers"] = theirs.summary(B, new_tokens)
        result["ratios"] = {
            "prefill": _paired_ratio(theirs.prefill, ours.prefill),
            "decode_step": _paired_ratio(theirs.step, ours.step),
            "request": _paired_ratio(theirs.request, ours.request),
        }
        result["same_tokens"] = same_tokens
        raw["transformers"] = asdict(theirs)
    result["raw_s"] = raw
    return result


def run_model_bench(
    console: Console,
    preset: str = "seed",
    batches: list[int] | None = None,
    prompt_len: int = 24,
    new_tokens: int = 20,
    repeats: int = 15,
    reference: bool = True,
    output: Path | None = None,
    blas_threads: int | None = 1,
) -> dict[str, Any]:
    """Time both implementations, show a table on `console`, optionally write JSON; returns the report.

    `blas_threads` holds BLAS (NumPy's OpenBLAS; torch's built-in MKL is not affected) to
    that many threads for the run, as the server does; None leaves the process default.
    """
    batches = [1, 8, 32] if batches is None else list(batches)
    cfg = preset_config(preset)
    _check_args(cfg, batches, prompt_len, new_tokens, repeats)
    torch = model = None
    try:
        if reference:
            torch, transformers = _import_reference()
    except RuntimeError as exc:
        console.print(f"[red]error[/] {exc}")
        raise SystemExit(1) from exc
    params = random_params(cfg, seed=0)
    w = prepare(params, cfg)
    if reference:
        with tempfile.TemporaryDirectory() as tmp:
            save_model(tmp, params, cfg)
            model = transformers.GPT2LMHeadModel.from_pretrained(tmp).eval()

    rng = np.random.default_rng(0)
    results = []
    with blas_threads_limited(blas_threads):  # one thread: as `corrige serve` runs NumPy
        info = machine_info(torch=torch)
        console.print(f"[bold]machine[/] {_describe_machine(info)}")
        console.print(
            f"[bold]model[/] preset {preset!r} (random weights, {cfg.num_params():,} parameters), "
            f"{prompt_len}-token prompts + {new_tokens} greedy tokens, {repeats} interleaved repetitions"
        )
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            task = progress.add_task("bench model", total=len(batches) * (WARMUP + repeats))
            for B in batches:
                progress.update(task, description=f"batch {B}")
                prompts = rng.integers(0, cfg.vocab_size, (B, prompt_len)).tolist()
                result = _bench_batch(
                    w, cfg, B, prompts, new_tokens, repeats, torch, model, lambda: progress.advance(task)
                )
                results.append(result)
                log.debug("batch %d: %s", B, {k: v for k, v in result.items() if k != "raw_s"})

    console.print(_table(results, reference))
    if reference and not all(r["same_tokens"] for r in results):
        console.print("[yellow]note[/] greedy tokens differ from transformers' at some batch size (a near tie?)")
    if hasattr(os, "getloadavg"):
        info["load_average_1min_after"] = round(os.getloadavg()[0], 2)
    report = {
        "benchmark": "model",
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": info,
        "config": {
            "preset": preset,
            "model": cfg.to_dict(),
            "batches": batches,
            "prompt_len": prompt_len,
            "new_tokens": new_tokens,
            "repeats": repeats,
            "reference": reference,
            "blas_threads": blas_threads,
        },
        "results": results,
    }
    if output is not None:
        output = Path(output)
        write_json(output, report, console)
    return report
