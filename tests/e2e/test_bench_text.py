"""`corrige bench text` end to end, tiny: it starts a server, times the email, its sentence and the
email re-checked after an edit, interleaved, reads the engine's work per request and writes its JSON."""

import json

from rich.console import Console

from corrige.bench.servers import ServedBench
from corrige.bench.text import EMAIL, SENTENCE, run_text_bench


def test_bench_text_times_the_email_and_its_sentence_and_writes_json(model_dir, tmp_path):
    out = tmp_path / "bench-text.json"
    with open(tmp_path / "console.txt", "w") as console_file:
        result = run_text_bench(
            Console(file=console_file, width=150), ServedBench(4, 1, model=model_dir, json_output=out)
        )
    assert SENTENCE in EMAIL
    assert {name: s["n"] for name, s in result["series"].items()} == {
        "email": 4,
        "sentence": 4,
        "sentence_text": 4,
        "recheck": 4,
    }
    figures = result["figures"]
    assert figures["ratio_p50"] == figures["email_p50_ms"] / figures["sentence_p50_ms"]
    # every sentence is read, in one piece or more, but the greeting ("Dear Ana,"), which is not sent
    assert 8 <= result["email"]["sentences"] <= 10 and result["email"]["pieces"] >= result["email"]["sentences"] - 1
    # the email's pieces are more work than one sentence, in fewer steps than one sentence's times their number
    assert figures["email_engine_prompt_tokens_p50"] > figures["sentence_engine_prompt_tokens_p50"] > 0
    assert 0 < figures["email_engine_steps_p50"] < result["email"]["pieces"] * figures["sentence_engine_steps_p50"]
    # the re-checked email runs the model for its edited sentence only: less than the whole email
    assert 0 < figures["recheck_engine_prompt_tokens_p50"] < figures["email_engine_prompt_tokens_p50"]
    assert figures["recheck_ratio_p50"] == figures["recheck_p50_ms"] / figures["sentence_p50_ms"]
    assert isinstance(result["target"]["met"], bool) and result["settings"]["clients"] == 1
    assert json.loads(out.read_text())["figures"] == figures
    assert "ratio email / sentence" in (tmp_path / "console.txt").read_text()
