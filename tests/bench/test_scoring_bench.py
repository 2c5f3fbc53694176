"""`corrige bench scoring`: a sentence and its candidate corrections scored with prefix reuse off
and on, on a real engine process; both sides agree, and reuse computes fewer prompt tokens."""

import json

from rich.console import Console

from corrige.bench.scoring import run_scoring_bench, scoring_workload
from corrige.tutor.agent import Tutor


def test_workload_is_each_sentence_then_one_word_changes_of_it(seed_model_dir):
    tutor = Tutor.load(seed_model_dir)
    groups = scoring_workload(tutor, 8, 5, seed=1)
    assert groups and all(2 <= len(g) <= 6 for g in groups)
    bos = tutor.tokenizer.special.bos
    for group in groups:
        sentence, *changed = group
        assert all(p[0] == bos and p != sentence and len(p) < tutor.n_ctx for p in group if p is not sentence)
        assert all(p[:2] == sentence[:2] or p[1] != sentence[1] for p in changed)  # a change may be the first word


def test_reuse_off_and_on_give_the_same_scores_and_on_computes_less(seed_model_dir, tmp_path):
    out = tmp_path / "scoring.json"
    console = Console(record=True, width=200)
    result = run_scoring_bench(
        console, clients=(2,), sentences=6, candidates_per_sentence=6, rounds=1, model=seed_model_dir, output=out
    )
    [row] = result["summary"]
    assert row["clients"] == 2 and row["max_score_gap"] < 1e-3
    assert 0.0 < row["computed_share_on"] < 1.0
    off, on = result["runs"]
    assert (off["reuse"], on["reuse"]) == (False, True)
    assert off["computed_tokens"] == off["prompt_tokens"] == on["prompt_tokens"] > on["computed_tokens"]
    assert json.loads(out.read_text())["settings"]["prompts"] == off["prompts"]
    assert "prefix reuse off vs on" in console.export_text()
