"""The tutor's interpretation of model outputs: corrections, edits and honest abstentions."""

import math
from dataclasses import replace

import pytest

from corrige.model import preset
from corrige.model.numpy_gpt import prepare
from corrige.model.weights import random_params
from corrige.tokenizer import BPETokenizer
from corrige.tutor.agent import (
    BUNDLED_MODEL,
    SEED_MODEL,
    Tutor,
    TutorConfig,
    TutorFront,
    changed_settings,
    normalize_sentence,
    rewrite_share,
)
from corrige.tutor.token_codec import PromptTooLong

CORPUS = [
    "Yesterday I goed to the store. / pasado irregular: goed → went",
    "Yesterday I went to the store. / sin errores",
    "She go to school every day. / tercera persona: go → goes",
] * 30


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    cfg = preset("smoke")
    tok = BPETokenizer.train(CORPUS, vocab_size=cfg.vocab_size)
    cfg = cfg.with_(vocab_size=tok.vocab_size)
    return Tutor(prepare(random_params(cfg), cfg), TutorFront(cfg, tok, TutorConfig(min_token_prob=0.5)))


def answer(tutor: Tutor, text: str, prob: float = 0.99, eos: bool = True):
    ids = tutor.tokenizer.encode(text) + ([tutor.tokenizer.special.eos] if eos else [])
    return ids, [math.log(prob)] * len(ids)


def test_a_confident_answer_becomes_a_correction_with_edits(tutor):
    ids, lps = answer(tutor, "Yesterday I went to the store. / pasado irregular: goed → went")
    c = tutor.interpret("Yesterday I goed to the store.", ids, lps, prompt_tokens=9)
    assert not c.abstained and c.changed
    assert c.corrected == "Yesterday I went to the store."
    assert c.gloss == "pasado irregular: goed → went"
    [edit] = c.edits
    assert (edit.original, edit.replacement, edit.category) == ("goed", "went", "past_irregular")
    assert c.sentence[edit.start : edit.end] == "goed"
    assert (c.prompt_tokens, c.completion_tokens) == (9, len(ids))


def test_an_unchanged_sentence_says_sin_errores(tutor):
    ids, lps = answer(tutor, "Yesterday I went to the store. / pasado irregular: go → went")
    c = tutor.interpret("Yesterday I went to the store.", ids, lps)
    assert not c.changed and c.gloss == "sin errores" and c.edits == []


@pytest.mark.parametrize(
    "text, prob, eos, reason",
    [
        ("Yesterday I went to the store. / pasado irregular: goed → went", 0.99, False, "unparsable"),
        ("Yesterday I went to the store.", 0.99, True, "unparsable"),
        ("Yesterday I went to the store. / pasado irregular: goed → went", 0.2, True, "low_confidence"),
        ("She plays tennis on Sundays with friends. / tercera persona: go → goes", 0.99, True, "rewrite_too_large"),
    ],
)
def test_untrustworthy_answers_are_abstentions(tutor, text, prob, eos, reason):
    ids, lps = answer(tutor, text, prob, eos)
    c = tutor.interpret("Yesterday I goed to the store.", ids, lps)
    assert c.abstained and c.abstain_reason == reason
    assert c.corrected == c.sentence == "Yesterday I goed to the store."
    assert not c.changed and c.edits == []


def test_low_confidence_does_not_block_leaving_a_sentence_alone(tutor):
    ids, lps = answer(tutor, "Yesterday I went to the store. / sin errores", prob=0.1)
    c = tutor.interpret("Yesterday I went to the store.", ids, lps)
    assert not c.abstained and not c.changed


def test_a_full_stop_the_learner_did_not_type_is_not_added(tutor):
    ids, lps = answer(tutor, "Yesterday I went to the store. / pasado irregular: goed → went")
    c = tutor.interpret("Yesterday  I goed to the store", ids, lps)
    assert c.sentence == "Yesterday I goed to the store"
    assert c.corrected == "Yesterday I went to the store"


def test_normalization_and_rewrite_share():
    assert normalize_sentence("  He  go home ") == ("He go home.", True)
    assert normalize_sentence("Where you live?") == ("Where you live?", False)
    # a stop inside a closing quote or bracket ends the sentence: none is added after it
    assert normalize_sentence('He said: "It is late."') == ('He said: "It is late."', False)
    assert normalize_sentence("She asked: 'Why?'") == ("She asked: 'Why?'", False)
    assert normalize_sentence("It was great (really).") == ("It was great (really).", False)
    assert normalize_sentence('She said "hello"') == ('She said "hello".', True)
    assert rewrite_share("a b c d", "a b c d") == 0.0
    assert rewrite_share("a b c d", "a x c d") == 0.25


def test_a_sentence_too_long_for_the_window_is_refused_clearly(tutor):
    with pytest.raises(PromptTooLong, match="shorter sentence"):
        tutor.build_prompt("word " * 200)


@pytest.mark.skipif(not (BUNDLED_MODEL / "model.safetensors").is_file(), reason="bundled model not present")
def test_the_bundled_model_corrects_the_seed_example():
    t = Tutor.load()
    c = t.correct("Yesterday I goed to the store.")
    assert c.corrected == "Yesterday I went to the store."
    assert "went" in c.gloss
    assert not t.correct("My sister is a nurse.").changed


def test_a_model_directory_carries_its_tuned_threshold(tmp_path):
    import json
    import shutil

    model = tmp_path / "model"
    shutil.copytree(SEED_MODEL, model)
    assert Tutor.load(model).config == TutorConfig(patterns=True)  # the seed model's tutor.json
    assert changed_settings(Tutor.load(model).config) == {"patterns": True}
    (model / "tutor.json").unlink()
    assert Tutor.load(model).config == TutorConfig()  # no tutor.json: the defaults
    (model / "tutor.json").write_text(json.dumps({"min_token_prob": 0.85}))
    assert Tutor.load(model).config.min_token_prob == 0.85
    assert Tutor.load(model, TutorConfig(min_token_prob=0.1)).config.min_token_prob == 0.1  # an explicit config wins
    (model / "tutor.json").write_text(json.dumps({"min_token_prob": 0.85, "temperature": 1}))
    with pytest.raises(ValueError, match="temperature"):
        Tutor.load(model)


@pytest.mark.skipif(not (BUNDLED_MODEL / "model.safetensors").is_file(), reason="bundled model not present")
def test_the_bundled_tutor_adds_what_the_language_model_prefers():
    from corrige.tutor.agent import LM_MODEL, load_rescorer

    t = Tutor.load()
    assert t.config.rescoring and t.rescorer is not None
    comma = t.correct("However I think it is a good idea.")
    assert comma.corrected == "However, I think it is a good idea."
    assert [e.category for e in comma.edits] == ["punctuation"] and comma.gloss.startswith("puntuación")
    confused = t.correct("I want to loose weight before the summer.")
    assert confused.corrected == "I want to lose weight before the summer."
    assert "loose → lose" in confused.gloss
    # correct sentences stay as they are
    for s in ("My sister is a nurse.", "In the evening, we usually watch a film."):
        assert not t.correct(s).changed
    # without rescoring the same model leaves the comma to the learner: the stage is what adds it
    plain = Tutor.load(config=replace(t.config, rescoring=False))
    assert plain.rescorer is None and not plain.correct("However I think it is a good idea.").changed
    assert load_rescorer(t.config, LM_MODEL).config.margins  # the bundled margins are tuned, not empty


def test_a_pattern_overrules_an_answer_whose_word_only_contains_its_fix(tutor):
    """After "didn't" the verb is bare: the answer's "gone" is not the rule's "go", though it holds
    the letters (a rule whose words the answer has agrees with it only as whole words)."""
    with_patterns = Tutor(tutor.weights, TutorFront(tutor.cfg, tutor.tokenizer, TutorConfig(patterns=True)))
    ids, lps = answer(tutor, "I didn't gone to the party. / forma verbal: went → gone")
    c = with_patterns.interpret("I didn't went to the party.", ids, lps)
    assert c.corrected == "I didn't go to the party."
    assert [(e.original, e.replacement) for e in c.edits] == [("went", "go")]


def test_an_answer_that_changes_nothing_says_so_whatever_its_gloss(tutor):
    """A gloss that names an edit beside an answer equal to the sentence (the model's answer only
    dropped a full stop the tutor had added) is never shown: nothing changed, "sin errores"."""
    ids, lps = answer(tutor, "Yesterday I went to the store / pasado irregular: goed → went")
    c = tutor.interpret("Yesterday I went to the store", ids, lps)
    assert c.corrected == c.sentence and c.edits == [] and not c.changed
    assert c.gloss == "sin errores"


def test_a_gloss_cut_short_is_written_from_the_edits_and_a_partial_one_abstains(tutor):
    """ "had 17 years → was 17" leaves out the "old" the answer put in: the edits stand, the learner
    reads them in their own words; "to wear → wear" beside "trainers → train" explains no "train"."""
    ids, lps = answer(tutor, "When Jorge was 17 years old, he went out. / edad con be: had 17 years → was 17")
    c = tutor.interpret("When Jorge had 17 years, he went out.", ids, lps)
    assert c.corrected == "When Jorge was 17 years old, he went out." and not c.abstained
    assert "years → years old" in c.gloss and "→ was 17" not in c.gloss
    ids, lps = answer(tutor, "They didn't let us wear train. / forma verbal: to wear → wear")
    c = tutor.interpret("They didn't let us to wear trainers.", ids, lps)
    assert c.abstained and c.abstain_reason == "edit_partly_explained" and c.corrected == c.sentence


def test_a_patterns_article_stays_when_the_language_model_would_drop_it():
    """The language model likes "works as engineer" better than "as an engineer"; the fixed
    pattern of a job after "as" knows better, so its article stays."""
    from corrige.tutor.agent import Tutor

    c = Tutor.load().correct("He works as engineer in a big company.")
    assert c.corrected == "He works as an engineer in a big company." and not c.abstained


def test_a_plural_made_regular_is_read_by_the_model_as_the_plural_and_named_so():
    """The speller's "childs → children" reaches the model as "children" and the learner as a
    noun's plural ("número del sustantivo"), not a spelling slip."""
    from corrige.tutor.agent import Tutor

    c = Tutor.load().correct("I play with my childs every day.")
    assert c.corrected == "I play with my children every day."
    assert [(e.original, e.replacement, e.category) for e in c.edits] == [("childs", "children", "noun_number")]


def test_words_inside_a_quotation_are_cited_as_written():
    """A learner who quotes a mistake, a song or a Spanish word cites it: nothing inside the quotes
    is corrected, and what is outside them still is."""
    from corrige.tutor.agent import Tutor

    t = Tutor.load()
    quoted = 'A common mistake is to write "I am agree" instead of "I agree".'
    assert t.correct(quoted).corrected == quoted
    assert t.correct('The Spanish word "examen" means "exam".').corrected == 'The Spanish word "examen" means "exam".'
    c = t.correct('He don\'t know that "people is" is wrong.')
    assert c.corrected == 'He doesn\'t know that "people is" is wrong.'
