"""The model card: what the bundled model is, how it was made, and how well it does.

Every figure comes from `corrige eval --card`, which measures and then writes this file.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corrige.tokenizer import TOKENIZER_FILE, BPETokenizer

CARD_FILE = "MODEL_CARD.md"

# what the synthetic-grammar model cannot do, on its card
LIMITS = [
    "- It knows the vocabulary and sentence shapes of its grammar; unfamiliar words or long, complex "
    "sentences make it abstain or miss errors rather than rewrite.",
    "- It abstains (returns the sentence unchanged, flagged) when the output does not parse, rewrites "
    "more than half the words, or any token of the corrected sentence has probability below the threshold.",
]


def _metrics_row(name: str, m: dict) -> str:
    return (
        f"| {name} | {m['n']} | {m['exact_match']:.3f} | {m['precision']:.3f} | {m['recall']:.3f} | "
        f"{m['f05']:.3f} | {m['false_alarm_rate']:.3f} | {m['abstain_rate']:.3f} |"
    )


def heading(title: str, level: int = 2) -> list[str]:
    """A Markdown heading with a blank line on either side: how each section of a card starts."""
    return ["", f"{'#' * level} {title}", ""]


def latency_section(lat: dict, what: str) -> list[str]:
    """The card's latency paragraph: batch-1 corrections, `lat['n']` of them (`what` names them)."""
    return [
        *heading("Latency"),
        f"One correction at batch 1 in the NumPy runtime (tokenize, prefill, greedy decode, interpret), "
        f"{lat['n']} {what}: p50 **{lat['p50_ms']:.2f} ms**, p95 {lat['p95_ms']:.2f} ms, "
        f"{lat['mean_prompt_tokens']:.1f} prompt tokens and "
        f"{lat['mean_completion_tokens']:.1f} generated tokens on average.",
    ]


def read_json(path: Path) -> dict[str, Any]:
    """A JSON file's object, or {} where there is no such file."""
    return json.loads(path.read_text()) if path.is_file() else {}


def configuration_section(model: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """The card's table of the model's shape, and its parameter count when measured."""
    lines = [
        *heading("Configuration"),
        "| field | value |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in model.items()],
    ]
    if "params" in results:
        lines.append(f"| parameters | {results['params']:,} |")
    return lines


def card_text(
    intro: list[str], sections: list[str], results: dict[str, Any], latency_what: str, limits: list[str]
) -> str:
    """A card: its introduction, its sections, the latency paragraph when measured, and its limits."""
    lines = [*intro, *sections]
    if results.get("latency"):
        lines += latency_section(results["latency"], latency_what)
    lines += [*heading("Limits"), *limits, ""]
    return "\n".join(lines)


def write_card_files(model_dir: Path, card: str, results: dict[str, Any]) -> Path:
    """The card, and beside it every figure it shows as `eval.json`."""
    path = model_dir / CARD_FILE
    path.write_text(card, encoding="utf-8")
    (model_dir / "eval.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path


def render_card(model_dir: Path, results: dict) -> str:
    meta = read_json(model_dir / "train_config.json")
    old_format = (model_dir / TOKENIZER_FILE).is_file() and BPETokenizer.load(model_dir).special.gloss is None
    separator = "/" if old_format else "<|gloss|>"
    intro = [
        f"# Model card: corrige tutor (`{model_dir.name}`)",
        "",
        "A GPT-2 (pre-LayerNorm, tanh GELU, tied LM head) trained from scratch to read "
        f"`<bos> sentence <sep>` and write `corrected {separator} Spanish gloss <eos>`, e.g. "
        f"*Yesterday I goed to the store* → *Yesterday I went to the store {separator} pasado irregular: "
        "goed → went*.",
        "Weights are safetensors with GPT-2 tensor names (`transformers.GPT2LMHeadModel` loads them); "
        "the server runs them in NumPy.",
    ]
    sections = [
        *configuration_section(meta.get("model", {}), results),
        *_training_section(meta),
        *_evaluation_section(results),
    ]
    return card_text(intro, sections, results, "runs", LIMITS)


def runs_lines(meta: dict[str, Any], settings: Callable[[dict[str, Any]], str]) -> list[str]:
    """One bullet per run that trained the model (the first, then each that went on from the one
    before), `settings(run's train config)` after its steps and minutes, then its dev evaluations."""
    lines = []
    runs = [*meta.get("continued_from", []), meta]
    for i, run in enumerate(runs):
        trained, how = run.get("result"), run.get("train", {})
        if not trained:
            continue
        start = "- then continued from that model's weights" if i else "- trained"
        if i and runs[i - 1].get("model", {}).get("vocab_size") != run.get("model", {}).get("vocab_size"):
            start += " (the `<|gloss|>` separator token added, `corrige.train.gloss_token`)"
        lines.append(
            f"{start}: {trained['steps']} steps in {trained['minutes']:.1f} min {settings(how)} (2-core CPU, PyTorch)"
        )
        for h in {h["step"]: h for h in trained.get("history", [])}.values():  # the last point may come twice
            lines.append(f"  - step {h['step']}: dev loss {h['dev_loss']:.4f}, dev exact match {h['dev_exact']:.3f}")
    return lines


def _training_section(meta: dict[str, Any]) -> list[str]:
    """The data recipe and every run that trained the model, with its dev evaluations."""
    train = meta.get("train", {})
    lines = [
        *heading("Data recipe"),
        "Synthetic, generated by `corrige.synth.data.make_splits` (no corpus is downloaded): a hand-written "
        "grammar of everyday English, then 25 error categories typical of Spanish speakers injected with "
        "their exact edits; 40% of examples are correct sentences with the gloss `sin errores`. Dev and test "
        "use held-out template variants and word combinations; no test sentence occurs in train.",
        "",
        f"- data seed {train.get('data_seed')}, {train.get('n_train')} training examples, "
        f"batch {train.get('batch_size')}, AdamW peak LR {train.get('lr')} (cosine), "
        f"budget {train.get('max_minutes')} min / {train.get('max_steps')} steps, seed {train.get('seed')}",
    ]
    lines += runs_lines(meta, lambda how: f"at peak LR {how.get('lr')}")
    return lines


def _settings_note(settings: dict[str, Any]) -> str:
    """The tutor settings behind the figures (the model's `tutor.json`), when it sets any."""
    if not settings:
        return ""
    shown = ", ".join(f"`{name}` {json.dumps(value)}" for name, value in settings.items())
    return f" The tutor's settings (`tutor.json`): {shown}."


def _evaluation_section(results: dict[str, Any]) -> list[str]:
    """The figures per set, the targets, and the synthetic test per category."""
    lines = [
        *heading("Evaluation"),
        f"Command: `{results.get('command', 'corrige eval --card')}`. Edits are word-level, scored M2-style; "
        "a false alarm is a correct sentence that the tutor changed; an abstention leaves the sentence unchanged."
        + _settings_note(results.get("tutor_settings") or {}),
        "",
        "| set | n | exact match | edit P | edit R | edit F0.5 | false alarms | abstain |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, m in results.get("sets", {}).items():
        lines.append(_metrics_row(name, m))
    targets = results.get("targets")
    if targets:
        lines += ["", "| target | value | met |", "|---|---|---|"]
        lines += [f"| {t['name']} | {t['value']} | {'yes' if t['met'] else 'no'} |" for t in targets]
    per_cat = results.get("per_category")
    if per_cat:
        lines += [
            *heading("Per category (synthetic test)", level=3),
            "| category | sentences | exact | recall | precision |",
            "|---|---|---|---|---|",
        ]
        for cat, c in sorted(per_cat.items()):
            lines.append(
                f"| {cat} | {c['sentences']} | {c['exact_match']:.3f} | {c['recall']:.3f} | {c['precision']:.3f} |"
            )
    return lines


def write_card(model_dir: Path, results: dict) -> Path:
    return write_card_files(model_dir, render_card(model_dir, results), results)
