"""The language model's card (`corrige/models/lm/MODEL_CARD.md`), written from what its directory
holds: `ngram.json` (data, sizes, sources) and `rescoring.json` (the tuned margins), with the
tuning table when `corrige lm tune --write` has one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CARD_FILE = "MODEL_CARD.md"
TUNING_FILE = "tuning.json"


def write(directory: Path) -> Path:
    info: dict[str, Any] = json.loads((directory / "ngram.json").read_text(encoding="utf-8"))
    lines = [
        "# Model card: the language model that scores candidate corrections (`lm`)",
        "",
        "A word trigram model with interpolated Kneser-Ney smoothing, stored in backoff form "
        "(`corrige/model/ngram.py`), built by `corrige lm build` (`corrige/train/ngram.py`) from the same "
        "clean corpus as the reader model. The tutor asks it which one-word change of a sentence, among the "
        "candidates its confusion sets propose (`corrige/tutor/candidates.py`), makes the sentence more likely "
        "by a tuned margin (`corrige/tutor/rescoring.py`), and which known word a non-word stands for where "
        "several are close (`corrige/tutor/spelling.py`). It needs NumPy alone.",
        "",
        "## Size",
        "",
        "| field | value |",
        "|---|---|",
    ]
    for key in ("sentences", "words", "vocabulary", "bigrams", "trigrams"):
        lines.append(f"| {key} | {info.get(key, 0):,} |")
    lines.append(f"| discounts | D2 {info['discounts']['D2']}, D3 {info['discounts']['D3']} |")
    config = info.get("config", {})
    lines += [
        f"| pruning | words seen under {config.get('min_word_count')} times are `<unk>`; trigrams seen under "
        f"{config.get('min_trigram_count')} times and bigrams after under {config.get('min_bigram_count')} "
        "different words are dropped |",
        "",
        "## Training data",
        "",
        "No learner corpus was used to build it. Rebuild the corpus as [docs/corpus.md](../../../docs/corpus.md) "
        f"says, then `corrige lm build sentences.txt --out corrige/models/lm --manifest manifest.json` "
        f"(corpus SHA-256 `{info.get('corpus_sha256', 'unknown')}`).",
        "",
        "| source | licence | sentences | attribution |",
        "|---|---|---|---|",
    ]
    for s in info.get("sources", []):
        lines.append(f"| [{s['name']}]({s['url']}) | {s['licence']} | {s['kept']:,} | {s['attribution']} |")
    margins = json.loads((directory / "rescoring.json").read_text(encoding="utf-8"))
    lines += [
        "",
        "## Margins",
        "",
        "How much more likely (natural log of the whole sentence's probability) a candidate must make the "
        "sentence before the tutor keeps it, per family and kind of change; a family and kind not listed "
        "proposes nothing. Chosen by `corrige lm tune` on JFLEG's dev half with its four references "
        "(public, never in training data; fetched at evaluation time, never committed): the lowest margin "
        "at which the candidates above it agree with a reference at least the target share of the time.",
        "",
    ]
    tuning_path = directory / TUNING_FILE
    if tuning_path.is_file():
        tuning = json.loads(tuning_path.read_text(encoding="utf-8"))
        lines += [
            f"Command: `{tuning['command']}`",
            "",
            "| family/kind | margin | floor (0.2% of the references changed) | right / proposed on dev "
            "| candidates right of all scored |",
            "|---|---|---|---|---|",
        ]
        for row in tuning["choices"]:
            margin = "off" if row["margin"] is None else f"{row['margin']:.2f}"
            floor = f"{row['floor']:.2f}" if "floor" in row else ""
            lines.append(
                f"| {row['key']} | {margin} | {floor} | {row['right']} / {row['proposed']} "
                f"| {row['right_all']} / {row['all']} |"
            )
    else:
        lines += ["| family/kind | margin |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in sorted(margins["margins"].items())]
    lines += [
        "",
        "What the tutor gains with it on JFLEG test and CoNLL-2014, beside LanguageTool and GECToR: "
        "[docs/rescoring.md](../../../docs/rescoring.md).",
        "",
        "## Limits",
        "",
        "- Three words of context: it cannot see a tense's time marker far away, or a preposition that "
        "depends on a verb four words back, so most families of verbs and prepositions stay off.",
        "- 78% of its text is 1850-1930 fiction (modernised spelling): modern words and registers are rarer "
        "in it than learners' topics.",
        "",
    ]
    path = directory / CARD_FILE
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
