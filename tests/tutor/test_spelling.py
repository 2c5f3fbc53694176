"""Non-word spelling fixes on top of the model's answer."""

import pytest
from tiny_tutor import read, tiny_tutor

from corrige.model.ngram import NgramLM
from corrige.tutor.agent import LM_MODEL, Tutor, TutorConfig, load_speller
from corrige.tutor.bundled import BUNDLED_MODEL
from corrige.tutor.plausibility import load_known_words, load_word_counts, write_known_words
from corrige.tutor.spelling import Speller, book_counts, edit_distance

COUNTS = {
    "which": 500,
    "witch": 20,
    "environment": 80,
    "really": 300,
    "real": 200,
    "rely": 12,
    "cat": 50,
    "cut": 45,
    "the": 1000,
    "we": 900,
    "have": 800,
    "to": 900,
    "take": 100,
    "care": 60,
    "of": 900,
    "food": 70,
}


@pytest.fixture(scope="module")
def speller() -> Speller:
    return Speller(COUNTS)


@pytest.mark.parametrize(
    "a, b, distance",
    [
        ("wich", "which", 1),
        ("realy", "really", 1),
        ("teh", "the", 1),
        ("enviroment", "environment", 1),
        ("ab", "ba", 1),
    ],
)
def test_edit_distance_counts_a_swap_of_neighbours_as_one(a, b, distance):
    assert edit_distance(a, b) == distance
    assert edit_distance(a, a) == 0


def test_a_non_word_gets_the_closest_then_most_frequent_known_word(speller):
    assert speller.suggest("wich") == "which"  # which (500) over witch (20)
    assert speller.suggest("enviromment") == "environment"  # two edits, a long word
    assert speller.suggest("realy") == "really"


@pytest.mark.parametrize(
    "word, why",
    [
        ("which", "a known word"),
        ("running", "lemminflect knows it"),
        ("cst", "cat and cut are about as frequent"),
        ("ab", "too short"),
        ("whcih2", "not letters only"),
        ("xyzzyq", "nothing close"),
        ("wihc", "one edit is all a short word may take (which is two away)"),
    ],
)
def test_no_suggestion_where_a_guess_would_be_unsafe(speller, word, why):
    assert speller.suggest(word) is None, why


def test_a_name_or_foreign_word_of_the_training_texts_is_never_suggested():
    # "pamela" (a name, written in lower case in the counts) is the closest word to "pamella"
    speller = Speller({**COUNTS, "pamela": 90, "because": 400})
    assert speller.suggest("pamella") is None
    assert speller.suggest("becuase") == "because"  # a function word lemminflect does not list


def test_learners_misspellings_the_rule_gets_wrong_have_their_word():
    # the rule would give "lot" for "alot" and "foot" for "foto", and nothing for "wich" near "with"
    speller = Speller({**COUNTS, "lot": 300, "foot": 200, "with": 2000, "thier": 5})
    assert speller.suggest("alot") == "a lot" and speller.suggest("foto") == "photo"
    assert speller.suggest("wich") == "which" and speller.suggest("thier") == "their"  # "thier" is in the counts
    fixes = speller.fixes("I like this foto alot.")
    assert [(f.original, f.replacement) for f in fixes] == [("foto", "photo"), ("alot", "a lot")]
    # old texts hold "lifes" and "wifes" as words: a learner's plural made regular all the same
    speller = Speller({**COUNTS, "lifes": 40, "wifes": 12})
    assert speller.suggest("lifes") == "lives" and speller.suggest("wifes") == "wives"
    assert speller.suggest("fourty") == "forty"  # "four" keeps its u in "four", not in "forty"
    assert speller.suggest("grammer") == "grammar" and speller.suggest("wierd") == "weird"


def test_two_letters_swapped_are_the_word_not_two_words():
    """ "infrom" is "inform" typed fast, not "in from"; "everytime" is still "every time"."""
    speller = Speller({**COUNTS, "inform": 20, "in": 15000, "from": 4000, "every": 600, "time": 1900})
    assert "in from" not in speller.candidates("infrom") and "inform" in speller.candidates("infrom")
    assert "every time" in speller.candidates("everytime")


def test_a_plural_made_regular_gets_its_plural_not_the_singular():
    """ "childs" is one letter from "child", but the learner meant more than one: children."""
    speller = Speller({**COUNTS, "child": 500, "children": 400, "woman": 300, "city": 300, "thief": 20})
    assert speller.suggest("childs") == "children" and speller.suggest("womans") == "women"
    assert speller.suggest("citys") == "cities" and speller.suggest("thiefs") == "thieves"
    fixes = speller.fixes("We take care of the childs.")  # a plural, not a spelling slip
    assert [(f.original, f.replacement, f.category) for f in fixes] == [("childs", "children", "noun_number")]


def test_fixes_skip_capitalised_words_but_the_first_and_give_offsets(speller):
    sentence = "Wich food, Carlos, wich is realy good in Valencia."
    fixes = speller.fixes(sentence)
    assert [(f.original, f.replacement) for f in fixes] == [("Wich", "Which"), ("wich", "which"), ("realy", "really")]
    assert all(sentence[f.start : f.end] == f.original for f in fixes)


def test_a_word_with_accents_is_one_word_and_a_spoken_form_is_left_alone():
    speller = Speller(COUNTS | {"ántonia": 40, "can": 600, "café": 30})
    assert speller.fixes("Ántonia and the café, wich we saw.") == speller.fixes("Antonia and the cafe, wich we saw.")
    assert [f.original for f in speller.fixes("Ántonia wich café")] == ["wich"]
    assert speller.fixes("He was preachin' to them.") == []


def test_word_counts_round_trip_and_keep_the_known_words(tmp_path):
    write_known_words(tmp_path, ["The cat saw the dog.", "the end"])
    assert (tmp_path / "words.txt").read_text().splitlines()[0] == "the\t3"
    assert load_word_counts(tmp_path) == {"the": 3, "cat": 1, "saw": 1, "dog": 1, "end": 1}
    assert {"cat", "cats", "saw", "dog"} <= load_known_words(tmp_path)
    (tmp_path / "words.txt").write_text("cat\ndog\n")  # a list written before counts were kept
    assert load_word_counts(tmp_path) == {} and "dog" in load_known_words(tmp_path)
    assert load_speller(tmp_path, TutorConfig()) is None
    with pytest.raises(ValueError, match="no word counts"):
        load_speller(tmp_path, TutorConfig(spelling=True))


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    answers = ["We have to take care of the enviroment. / sin errores", "She go home. / tercera persona: go → goes"]
    return tiny_tutor(answers, TutorConfig(min_token_prob=0.5), Speller(COUNTS))


def test_the_warm_up_builds_the_index_a_request_would_otherwise_build():
    speller = Speller(COUNTS)
    cold = tiny_tutor(["We have to take care of the food. / sin errores"], TutorConfig(), speller)
    assert speller._built is None
    cold.warm_up()
    assert speller._built is not None and "which" in speller._built["wich"]


def test_spelling_fixes_join_the_models_edits_each_explained(tutor):
    # the model reads the sentence with its non-words fixed, and answers that sentence
    assert tutor.model_input("She go to the enviroment")[0] == "She go to the environment."
    prompt = tutor.tokenizer.decode(tutor.build_prompt("She go to the enviroment."))
    assert "environment" in prompt and "enviroment" not in prompt
    c = read(tutor, "She go to the enviroment.", "She goes to the environment. / tercera persona: go → goes")
    assert not c.abstained and c.corrected == "She goes to the environment."
    assert c.sentence == "She go to the enviroment."  # the learner's own words
    assert c.gloss == "tercera persona: go → goes; ortografía: enviroment → environment"
    assert [e.category for e in c.edits] == ["third_person", "spelling"]


def test_without_spell_first_the_fixes_go_on_top_of_the_models_answer():
    answers = ["We have to take care of the enviroment. / sin errores", "She go home. / tercera persona: go → goes"]
    later = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, spell_first=False), Speller(COUNTS))
    assert later.model_input("She go to the enviroment.") == ("She go to the enviroment.", [])
    c = read(later, "She go to the enviroment.", "She goes to the enviroment. / tercera persona: go → goes")
    assert c.corrected == "She goes to the environment."
    assert c.gloss == "tercera persona: go → goes; ortografía: enviroment → environment"


def test_a_models_edit_of_a_fixed_word_is_named_as_the_model_names_it(tutor):
    # "dont" is read "don't"; the model's "doesn't" is the learner's "dont → doesn't", an agreement
    speller = Speller({**COUNTS, "don't": 900, "doesn't": 500, "he": 900, "like": 300})
    spells = tiny_tutor(["He doesn't like food. / tercera persona: don't → doesn't"], TutorConfig(), speller)
    assert spells.model_input("He dont like food.")[0] == "He don't like food."
    c = read(spells, "He dont like food.", "He doesn't like food. / tercera persona: don't → doesn't")
    assert c.corrected == "He doesn't like food."
    assert [(e.original, e.replacement, e.category) for e in c.edits] == [("dont", "doesn't", "third_person")]


def test_the_model_reads_the_learners_words_when_the_fixes_would_not_fit_the_window(tutor, monkeypatch):
    sentence = "We have to take care of the enviroment."
    assert tutor.model_input(sentence)[0] == "We have to take care of the environment."
    # a fix that lengthens the sentence past the window ("alot" → "a lot"): it is read as written
    monkeypatch.setattr(tutor, "_fits", lambda text: "environment" not in text)
    monkeypatch.setattr(tutor, "_read", {})  # the reading above was kept for the answer
    assert tutor.fits(sentence) and tutor.model_input(sentence) == (sentence, [])
    assert "enviroment" in tutor.tokenizer.decode(tutor.build_prompt(sentence))


def test_an_abstention_still_gets_the_spelling_of_the_learners_own_words(tutor):
    c = read(tutor, "We take care of the enviroment.", "We take care of the enviroment. / sin errores", prob=0.1)
    assert not c.abstained and c.corrected == "We take care of the environment."
    assert c.gloss == "ortografía: enviroment → environment"
    unsure = read(tutor, "We take care of the food.", "We take care of the fod. / ortografía: food → fod", prob=0.1)
    assert unsure.abstained and unsure.corrected == "We take care of the food."


@pytest.fixture(scope="module")
def bundled() -> Speller:
    """The default model's speller: its training texts' counts, the book counts and the language model."""
    speller = load_speller(BUNDLED_MODEL, TutorConfig(spelling=True), NgramLM.load(LM_MODEL))
    assert speller is not None and speller.lm is not None
    return speller


def fixed(speller: Speller, sentence: str) -> list[tuple[str, str]]:
    return [(f.original, f.replacement) for f in speller.fixes(sentence)]


def test_the_language_model_chooses_the_word_the_context_needs(bundled):
    assert fixed(bundled, "I go to wark every day.") == [("wark", "work")]
    # dark, work, warm: nothing in the sentence tells them apart, so no guess
    assert fixed(bundled, "The wark was dark.") == []
    # the same non-word, another context: the words around it choose
    assert fixed(bundled, "I recived your leter yesterday.") == [("recived", "received"), ("leter", "letter")]


def test_the_book_counts_know_modern_words_the_training_texts_lack(bundled):
    assert "technologies" not in load_word_counts(BUNDLED_MODEL) and "technologies" in book_counts()
    assert fixed(bundled, "Old people could not find new tecnologies.") == [("tecnologies", "technologies")]
    assert not bundled.is_nonword("smartphone") and not bundled.is_nonword("internet")
    # inflections made up by rule from the training texts' words are no shield for a misspelling
    assert fixed(bundled, "She is a good techer.") == [("techer", "teacher")]


def test_two_edits_of_any_kind_reach_the_word(bundled):
    assert fixed(bundled, "We must protect the inviroment.") == [("inviroment", "environment")]  # i→e, n added
    assert fixed(bundled, "It is a sofisticated machine.") == [("sofisticated", "sophisticated")]  # f→p, h added
    assert fixed(bundled, "I definetly agree.") == [("definetly", "definitely")]  # a vowel, a letter added


def test_a_word_run_together_with_a_function_word_is_split(bundled):
    assert fixed(bundled, "My friend likes it aswell.") == [("aswell", "as well")]
    assert fixed(bundled, "Infact, I agree.") == [("Infact", "In fact")]
    # two content words run together are as often a compound the lists lack
    assert all(" " not in new for _, new in fixed(bundled, "I read it in my newsfeed."))
    # ... and a rival: not a word one letter away that means something else
    assert fixed(bundled, "The news arrives in realtime.") == []  # not "mealtime"
    assert fixed(bundled, "I called her on my handphone.") == []  # not "headphone"


def test_a_negative_prefix_is_never_dropped(bundled):
    # "unnormal" stands for "abnormal": "normal" says the opposite
    assert "normal" not in bundled.candidates("unnormal")
    assert all(new != "normal" for _, new in fixed(bundled, "He feels unnormal and sad."))


def test_the_first_word_of_a_sentence_is_fixed_only_for_a_common_word(bundled):
    assert fixed(bundled, "Becouse I was tired, I went home.") == [("Becouse", "Because")]
    assert fixed(bundled, "Althogh it rained, we went out.") == [("Althogh", "Although")]
    for name in ("Khafre built the pyramid.", "Bacchan is an actor.", "Amitabh sings well.", "Carlos ate it."):
        assert fixed(bundled, name) == [], name


def test_a_pattern_wins_over_the_speller_on_the_same_word(bundled):
    answers = ["Their parents teached them. / sin errores"]
    tutor = tiny_tutor(answers, TutorConfig(min_token_prob=0.5, patterns=True), bundled)
    c = read(tutor, "Their parents teached them.", "Their parents teached them. / sin errores")
    assert c.corrected == "Their parents taught them."  # not the speller's "reached"
    assert [e.category for e in c.edits] == ["past_irregular"]


def test_a_misspelt_form_lemminflect_keeps_is_still_a_non_word(bundled):
    # lemminflect lists "occuring" as a second spelling of occur's -ing form: a learner's misspelling
    assert bundled.is_nonword("occuring") and not bundled.is_nonword("occurring")
    assert fixed(bundled, "This is occuring every day.") == [("occuring", "occurring")]
    # a second spelling that is not the first with a letter doubled is a word (learnt, dreamt)
    assert not bundled.is_nonword("learnt") and not bundled.is_nonword("dreamt")
    assert fixed(bundled, "We travelled a lot and traveled more.") == []


def test_a_rare_spelling_of_the_old_novels_one_edit_from_a_common_word_is_checked(bundled):
    counts = load_word_counts(BUNDLED_MODEL)
    assert 3 <= counts["thet"] < 40 and "thet" not in book_counts()  # a word of the training texts
    assert not bundled.is_nonword("thet") and bundled.is_suspect("thet")
    assert fixed(bundled, "I know thet he is right.") == [("thet", "that")]
    # seen once or twice there, a word is no word at all
    assert counts["woud"] < 3 and bundled.is_nonword("woud")
    assert fixed(bundled, "I woud like to go.") == [("woud", "would")]
    # a name of the book counts, rare there, written in lower case
    assert book_counts()["yong"] and bundled.is_suspect("yong")
    assert fixed(bundled, "When I was yong I lived in Lima.") == [("yong", "young")]
    # rare in the training texts too, but lemminflect knows it, or no common word is one edit away
    assert not bundled.is_suspect("selfie") and fixed(bundled, "We took a selfie together.") == []
    # a spelling of the other side of the Atlantic is no misspelling (councilor, councillor)
    assert fixed(bundled, "The hospital can provide a councilor.") == []


def test_a_suggestion_never_repeats_the_word_beside_it(bundled):
    # "thet" and "dhe" both read "the": the suspect word yields, the non-word is fixed
    assert fixed(bundled, "People understand thet dhe product is good.") == [("dhe", "the")]
    assert fixed(bundled, "I think thet thet is good.") == []


def test_a_candidate_the_language_model_lacks_pays_for_its_own_share_of_unknown_words(bundled):
    # the model scores "postie" as <unk>, every word it lacks together: as such it beat "positive"
    assert "postie" not in bundled.lm.index and "positive" in bundled.lm.index
    assert bundled._unknown_cost("postie") < bundled._unknown_cost("positive") == 0.0
    assert fixed(bundled, "It makes them more postive to do it.") == [("postive", "positive")]


def test_a_crude_word_is_never_suggested(bundled):
    assert "porn" in bundled.candidates("pron")  # one swap away, and frequent in the web-counted list
    assert all(new != "porn" for _, new in fixed(bundled, "Users are more and more pron to frauds."))


def test_a_contraction_without_its_apostrophe_gets_it_back(bundled):
    assert fixed(bundled, "I dont know, you shouldnt go.") == [("dont", "don't"), ("shouldnt", "shouldn't")]
    assert fixed(bundled, "I cant stand the cant of politicians.") == []  # a word of its own


def test_a_slip_is_named_for_what_the_learner_got_wrong():
    """A plural made regular is the noun's number, an adjective with an -s the adjective's; the rest
    is spelling."""
    from corrige.tutor.spelling import _kind_of_slip

    assert _kind_of_slip("childs", "children") == "noun_number"
    assert _kind_of_slip("differents", "different") == "adjective_plural"
    assert _kind_of_slip("realy", "really") == "spelling" and _kind_of_slip("wich", "which") == "spelling"


@pytest.mark.parametrize("word", ["influencers", "hashtag", "lockdown", "ebooks", "chatbot", "esports"])
def test_todays_words_are_words_not_misspellings(speller, word):
    assert not speller.is_nonword(word)
    assert speller.fixes(f"{word} {word}") == []


@pytest.mark.parametrize(
    ("word", "is_word"),
    [
        ("preproduction", True),  # pre + production, written as one
        ("multiplatform", True),
        ("untill", False),  # "till" is too short to be the word after a prefix
        ("interresting", False),  # no inter-: a slip of "interesting"
    ],
)
def test_a_prefix_written_onto_a_common_word_makes_a_word(bundled, word, is_word):
    assert bundled.is_nonword(word) is not is_word


def test_a_first_word_learners_write_without_its_apostrophe_gets_it(bundled):
    assert [(e.original, e.replacement) for e in bundled.fixes("Dont wait for me.")] == [("Dont", "Don't")]
    assert [(e.original, e.replacement) for e in bundled.fixes("Doesnt matter.")] == [("Doesnt", "Doesn't")]
