"""The model card of a model trained on real sentences: sources, error rates, ERRANT scores.

`corrige eval --card` measures and then writes it (`measure`, then `write`), for a model whose
`train_config.json` names a pairs file. Every figure comes from that run; the corpus section
comes from the corpus manifest (`corrige corpus build`), summarised into the model directory
as `corpus.json` so the card can be rebuilt without the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corrige.train.card import card_text, configuration_section, heading, read_json, runs_lines, write_card_files

CORPUS_FILE = "corpus.json"
TUTOR_DIR = Path(__file__).resolve().parent.parent / "tutor"
DEV_SET = TUTOR_DIR / "learner_dev.tsv"
REALISTIC = TUTOR_DIR / "realistic.tsv"

# (name, file, half, targets): the targets of the tutor on real learners' writing
SETS: tuple[tuple[str, Path, str], ...] = (
    ("learner dev, test half (held out)", DEV_SET, "test"),
    ("learner dev, tune half (thresholds)", DEV_SET, "tune"),
    ("realistic.tsv (hand-written, grammar style)", REALISTIC, "all"),
)
TARGETS: dict[str, list[tuple[str, str, Callable[[float], bool]]]] = {
    "learner dev, test half (held out)": [
        ("precision ≥ 0.6", "precision", lambda v: v >= 0.6),
        ("recall ≥ 0.2", "recall", lambda v: v >= 0.2),
        ("false alarms ≤ 3%", "false_alarm_rate", lambda v: v <= 0.03),
        ("refusals 0", "refusals", lambda v: v == 0),
    ],
    "realistic.tsv (hand-written, grammar style)": [
        ("F0.5 ≥ 0.8", "f05", lambda v: v >= 0.8),
        ("false alarms ≤ 3%", "false_alarm_rate", lambda v: v <= 0.03),
    ],
}


# what a model trained on real sentences cannot do, on its card
LIMITS = [
    "- Trained on CPU for a limited time: it knows common errors in common words best, and abstains "
    "when it is unsure rather than rewrite.",
    "- It abstains when it drops or invents a content word, or writes a word it never saw in training; "
    "and when its gloss does not describe its edits, unless the tutor's own word-level rules can name them.",
]


def summarise_corpus(manifest_path: Path) -> dict[str, Any]:
    """Per source: name, licence, attribution, url, sentences kept; and the totals (no file lists)."""
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    sources = [
        {k: s.get(k) for k in ("name", "licence", "attribution", "url", "kept")} for s in manifest.get("sources", [])
    ]
    totals = manifest.get("totals", {})
    return {"sources": sources, "kept": totals.get("kept"), "sha256": manifest.get("sha256")}


def measure(tutor: Any, on_set: Callable[[str], None] | None = None) -> dict[str, Any]:
    """ERRANT scores on each set and their targets; the tutor as configured (its tuned threshold)."""
    from corrige.evaluation.errant_predict import predict
    from corrige.evaluation.errant_scoring import ErrantScorer, read_parallel

    scorer = ErrantScorer()
    results: dict[str, Any] = {
        "sets": {},
        "targets": [],
        "min_token_prob": tutor.config.min_token_prob,
        "gloss_from_edits": tutor.config.gloss_from_edits,
        "spelling": tutor.config.spelling,
        "patterns": tutor.config.patterns,
        "rescoring": tutor.config.rescoring,
    }
    for name, path, half in SETS:
        if on_set:
            on_set(name)
        rows = read_parallel(path, half)
        scores = scorer.score(rows, predict(tutor, [r.source for r in rows])).to_dict()
        scores.pop("per_type", None)
        results["sets"][name] = scores
        for label, key, ok in TARGETS.get(name, []):
            value = scores[key]
            results["targets"].append({"set": name, "name": label, "value": value, "met": bool(ok(value))})
    return results


def _row(name: str, s: dict[str, Any]) -> str:
    return (
        f"| {name} | {s['rows']} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f05']:.3f} | "
        f"{s['false_alarm_rate']:.1%} | {s['abstention_rate']:.1%} | {s['refusals']} |"
    )


def render(model_dir: Path, results: dict[str, Any]) -> str:
    meta = read_json(model_dir / "train_config.json")
    intro = [
        f"# Model card: corrige tutor for real learners' writing (`{model_dir.name}`)",
        "",
        "A GPT-2 (pre-LayerNorm, tanh GELU, tied LM head) trained from scratch to read `<bos> sentence <sep>` "
        "and write `corrected <|gloss|> Spanish gloss <eos>`: the separator is a special token that no typed "
        "text can produce. Weights are safetensors with GPT-2 tensor names; the server runs them in NumPy.",
    ]
    sections = [
        *configuration_section(meta.get("model", {}), results),
        *_data_section(meta, read_json(model_dir / CORPUS_FILE)),
        *_evaluation_section(results),
        *_public_section(results),
    ]
    return card_text(intro, sections, results, "learner sentences", LIMITS)


def _data_section(meta: dict[str, Any], corpus: dict[str, Any]) -> list[str]:
    """The corpus the sentences came from, how the errors were injected, and the training run."""
    train = meta.get("train", {})
    lines = heading("Training data")
    if corpus:
        lines += [
            f"Real English sentences, {corpus.get('kept', 0):,} after cleaning and deduplication "
            "(`corrige corpus build`; [docs/corpus.md](../../../docs/corpus.md) tells how to rebuild it). "
            "No learner corpus was used for training or tuning.",
            "",
            "| source | licence | sentences | attribution |",
            "|---|---|---|---|",
        ]
        lines += [
            f"| [{s['name']}]({s['url']}) | {s['licence']} | {s.get('kept') or 0:,} | {s['attribution']} |"
            for s in corpus.get("sources", [])
        ]
    lines += [
        "",
        "Errors typical of Spanish speakers were injected into these sentences through spaCy's analysis "
        "(`corrige corpus pairs`), with a Spanish gloss for every edit; the rates per category and their "
        "published sources are in [corrige/corpus/RATES.md](../../corpus/RATES.md).",
        "",
        f"- batch {train.get('batch_size')}, AdamW (cosine schedule), bfloat16 autocast "
        f"{'on' if train.get('bf16') else 'off'}",
    ]
    return lines + runs_lines(meta, _run_settings)


def _run_settings(train: dict[str, Any]) -> str:
    return (
        f"on pairs file `{Path(str(train.get('pairs'))).name}` ({train.get('pairs_limit') or 'all'} rows) "
        f"at peak LR {train.get('lr')}"
    )


def _gloss_note(results: dict[str, Any]) -> str:
    """What the tutor adds to the model's answers for these figures (its `tutor.json`)."""
    note = ""
    if results.get("gloss_from_edits"):
        note += (
            " Where the model's gloss does not describe its edits, the tutor writes the gloss from the edits' own"
            " words (`corrige/tutor/edit_labels.py`) and leaves out an edit those words do not name."
        )
    if results.get("spelling"):
        note += (
            " Non-words the answer leaves are fixed (`corrige/tutor/spelling.py`): the known words within two edits,"
            " from the training vocabulary and a modern word list with Google Books counts (symspellpy's English"
            " dictionary, MIT; SCOWL's words counted in the Google Books Ngram corpus, CC BY 3.0), the one the"
            " trigram language model prefers in the sentence."
        )
    if results.get("patterns"):
        note += " So are the fixed learner patterns it leaves (`corrige/tutor/patterns.py`: he don't, people is, …)."
    if results.get("rescoring"):
        note += (
            " Then one-word changes from confusion sets that the trigram language model prefers by a tuned margin"
            " (`corrige/tutor/rescoring.py`, [its card](../lm/MODEL_CARD.md)): an extra article, a confused word,"
            " a comma after an opening phrase."
        )
    return note


def _evaluation_section(results: dict[str, Any]) -> list[str]:
    """ERRANT's figures per learner set, and the targets."""
    lines = [
        *heading("Evaluation (ERRANT)"),
        f"Command: `{results.get('command', 'corrige eval --card')}`. Span-based correction scores with one "
        "reference (ERRANT 3, spaCy's small English pipeline); a false alarm is a correct sentence the tutor "
        "changed; abstentions and refusals leave the sentence unchanged. Abstention threshold: "
        f"{results.get('min_token_prob')} (tuned on the tune half).{_gloss_note(results)}",
        "",
        "| set | rows | P | R | F0.5 | false alarms | abstained | refused |",
        "|---|---|---|---|---|---|---|---|",
        *[_row(name, s) for name, s in results.get("sets", {}).items()],
    ]
    if results.get("targets"):
        lines += ["", "| set | target | value | met |", "|---|---|---|---|"]
        lines += [
            f"| {t['set']} | {t['name']} | {t['value']:.3f} | {'yes' if t['met'] else 'no'} |"
            for t in results["targets"]
        ]
    return lines


def _public_section(results: dict[str, Any]) -> list[str]:
    """JFLEG test and CoNLL-2014 beside LanguageTool's and GECToR's saved outputs, when measured."""
    lines = [*heading("Public learner sets (ERRANT)")]
    rows = results.get("public")
    if not rows:
        return lines + [
            "Not measured in this run: `corrige eval --card --public-sets DIR` adds JFLEG test and CoNLL-2014 beside "
            "LanguageTool and GECToR (the sets are fetched at evaluation time, never committed; "
            "[docs/rescoring.md](../../../docs/rescoring.md) tells where they come from)."
        ]
    lines += [
        "Fetched at evaluation time, never committed nor trained on (docs/rescoring.md). References: the first "
        "(JFLEG's ref0, CoNLL's annotator 0), or the best of all for each sentence (JFLEG's four, CoNLL's two, "
        "as errant_compare chooses); false alarms count against the first. Other systems: their saved outputs.",
        "",
        "| set | references | system | TP / FP / FN | P | R | F0.5 | false alarms |",
        "|---|---|---|---|---|---|---|---|",
        *[_public_row(r) for r in rows],
    ]
    return lines


def _public_row(r: dict[str, Any]) -> str:
    return (
        f"| {r['set']} | {r['references']} | {r['system']} | {r['tp']} / {r['fp']} / {r['fn']} | "
        f"{r['precision']:.3f} | {r['recall']:.3f} | {r['f05']:.3f} | {r['false_alarms']} of {r['correct_sources']} |"
    )


def write(model_dir: Path, results: dict[str, Any]) -> Path:
    return write_card_files(model_dir, render(model_dir, results), results)
