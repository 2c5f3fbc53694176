"""Word-level diffs: offsets, widening of insertions/deletions, merging, categories."""

from hypothesis import given
from hypothesis import strategies as st

from corrige.tutor.edits import Edit, apply_edits, diff_edits, tokenize


def _check(source, corrected, gloss=None):
    edits = diff_edits(source, corrected, gloss)
    for e in edits:
        assert source[e.start : e.end] == e.original
    assert apply_edits(source, edits) == corrected
    return [(e.original, e.replacement, e.category) for e in edits]


def test_tokenize_keeps_contractions():
    assert [t.text for t in tokenize("I don't know, it's 5 o'clock.")] == [
        "I",
        "don't",
        "know",
        ",",
        "it's",
        "5",
        "o'clock",
        ".",
    ]


def test_no_change():
    assert diff_edits("I like tea.", "I like tea.") == []


def test_replacement():
    assert _check(
        "Yesterday I goed to the store.", "Yesterday I went to the store.", "pasado irregular: goed → went"
    ) == [("goed", "went", "past_irregular")]


def test_insertion_is_widened_to_the_next_word():
    assert _check("I am teacher.", "I am a teacher.", "artículo con profesión: teacher → a teacher") == [
        ("teacher", "a teacher", "profession_article")
    ]


def test_insertion_before_final_punctuation_uses_previous_word():
    assert _check("I like football.", "I like football very much.") == [("football", "football very much", "other")]


def test_deletion():
    assert _check("I am agree with you.", "I agree with you.", "patrón verbal: am agree → agree") == [
        ("am agree", "agree", "verb_pattern")
    ]
    assert _check("The life is hard.", "Life is hard.") == [("The life", "Life", "other")]


def test_swap_is_one_edit():
    assert _check("I have a car red.", "I have a red car.", "orden del adjetivo: car red → red car") == [
        ("car red", "red car", "adjective_order")
    ]


def test_two_edits_get_their_own_categories():
    got = _check(
        "He go to school in monday.",
        "He goes to school on Monday.",
        "tercera persona: go → goes; preposición: in → on; mayúscula: monday → Monday",
    )
    # "in monday → on Monday" is one changed stretch, and two explained edits side by side
    assert got == [("go", "goes", "third_person"), ("in", "on", "preposition"), ("monday", "Monday", "capitalisation")]


def test_a_stretch_is_split_only_where_the_items_tile_it_exactly():
    items = "tercera persona: enjoy → enjoys; patrón verbal: to meet → meeting"
    both = _check("She enjoy to meet people.", "She enjoys meeting people.", items)
    assert both == [("enjoy", "enjoys", "third_person"), ("to meet", "meeting", "verb_pattern")]
    one = _check("She enjoy to meet people.", "She enjoys meeting people.", "tercera persona: enjoy → enjoys")
    assert one == [("enjoy to meet", "enjoys meeting", "third_person")]  # one item: not split
    # the items' replacements do not make the stretch's: not split
    wrong = "tercera persona: enjoy → enjoys; patrón verbal: to meet → meet"
    assert _check("She enjoy to meet people.", "She enjoys meeting people.", wrong)[0][0] == "enjoy to meet"


def test_item_is_found_where_the_edit_is():
    # "in" occurs twice; the gloss item belongs to the second one.
    got = _check("We swim in the lake in Sunday.", "We swim in the lake on Sunday.", "preposición: in → on")
    assert got == [("in", "on", "preposition")]


def test_one_item_can_explain_two_edits():
    got = _check("I have 20 years.", "I am 20 years old.", "edad con be: have 20 years → am 20 years old")
    assert got == [("have", "am", "age_have"), ("years", "years old", "age_have")]


def test_a_moved_word_is_one_edit_as_its_item_says():
    """Word for word the diff would be "very → the tennis very" and "the tennis but → but"."""
    gloss = "posición del adverbio: very much the tennis → the tennis very much"
    got = _check("I like very much the tennis but not golf.", "I like the tennis very much but not golf.", gloss)
    assert got == [("very much the tennis", "the tennis very much", "adverb_position")]
    got = _check(
        "Where is the station?", "Where the station is?", "orden de las palabras: is the station → the station is"
    )
    assert got == [("is the station", "the station is", "word_order")]
    gloss = "orden de la pregunta: means this word → does this word mean"  # the word moved changes its ending
    got = _check("What means this word?", "What does this word mean?", gloss)
    assert got == [("means this word", "does this word mean", "question_order")]


def test_a_word_put_in_after_its_word_is_told_with_it():
    """Not "a → ourselves a": the item says which word it goes with."""
    got = _check("We enjoyed a lot.", "We enjoyed ourselves a lot.", "patrón verbal: enjoyed → enjoyed ourselves")
    assert got == [("enjoyed", "enjoyed ourselves", "verb_pattern")]
    got = _check("I have my car since May.", "I have had my car since May.", "presente perfecto: have → have had")
    assert got == [("have", "have had", "present_perfect")]


def test_edit_key():
    assert Edit(1, 3, "ab", "cd", "x").key == (1, 3, "cd")


vocab = st.sampled_from(["I", "you", "like", "tea", "the", "a", "red", "car", "went", "go", "to", "school", "don't"])
sentences = st.lists(st.tuples(vocab, st.booleans()), min_size=1, max_size=8).map(
    lambda ws: " ".join(w + ("," if comma and k < len(ws) - 1 else "") for k, (w, comma) in enumerate(ws)) + "."
)


@given(sentences, sentences)
def test_diff_round_trip(source, corrected):
    _check(source, corrected)


def test_a_known_word_is_not_spelt_as_another():
    """The model's "apps → apples" under "ortografía": the speller knows "apps", so the edit goes."""
    from corrige.tutor.agent import Correction, _without_wrong_edits

    sentence = "There are many apps for that."
    e = Edit(15, 19, "apps", "apples", "spelling")
    c = Correction(sentence, "There are many apples for that.", "ortografía: apps → apples", [e])
    assert _without_wrong_edits(c, {"apps"}.__contains__).abstained
    assert _without_wrong_edits(c, set().__contains__).edits == [e]  # a rare word may be a misspelling
