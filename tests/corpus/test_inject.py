"""The error injector on real spaCy parses: every pair is exact, glossed the way ``diff_edits``
reads it, deterministic, and every category is made where it can be."""

import collections
import random
from pathlib import Path

import pytest

pytest.importorskip("spacy")
pytest.importorskip("lemminflect")

from corrige.corpus import inject as inj  # noqa: E402
from corrige.corpus.inject import RATE_TABLE, RATES, Injector, Pair, load_pipeline  # noqa: E402
from corrige.corpus.lexicon import is_nonword  # noqa: E402
from corrige.tutor.answer_text import NO_ERRORS_GLOSS, split_gloss  # noqa: E402
from corrige.tutor.categories import INJECTED_CATEGORY_IDS, OTHER, id_of  # noqa: E402
from corrige.tutor.edits import diff_edits  # noqa: E402

# Clean everyday sentences, varied, and together able to host every category (a comment names
# what a line is there for when that is not obvious).
SENTENCES = [
    "Yesterday I went to the store to buy some bread.",
    "My friends are very happy because it is sunny.",
    "She has lived in Madrid since 2015.",
    "I am 20 years old and I have two children.",  # age_have, noun_number
    "The man who lives next door is a teacher.",  # pronoun, profession_article
    "Where do you live?",  # question_no_do
    "Where is the station?",  # question_order
    "I always drink coffee in the morning.",  # adverb_position, word_order
    "I really enjoy reading books about technology.",  # verb_pattern, spelling
    "If it rains, we will stay at home.",  # verb_tense, missing_subject, preposition
    "It is important to study every day.",
    "People are very friendly in Spain.",  # people_plural, determiner
    "There are many things to do here.",  # there_is_plural
    "He loves his mother very much.",  # possessive_his_her
    "This car is bigger than mine.",  # comparative, word_confusion
    "I can swim very well, but I don't know anything about sailing.",  # verb_form, double_negation
    "We had a party for her birthday and I took a photo.",  # calque, collocation
    "The room is big enough for two people.",  # word_order
    "I saw him yesterday at the university.",  # past_marker, verb_tense
    "Their house is near the river.",
    "You're right, it's too late to call them now.",
    "My brother works in a bank and plays football on Sundays.",  # third_person
    "I don't know what it is.",  # word_order (indirect question)
    "Do you know where the museum is?",  # question_order (embedded in a question)
    "She gave me some good advice about my new job.",  # uncountable
    "I like red cars and old houses.",  # adjective_plural
    "We bought a new car last week.",  # adjective_order, past_marker
    "They were tired after the long trip.",  # agreement
    "The students who live here are friendly.",  # agreement in a relative clause
    "I feel tired today.",  # pronoun (reflexive)
    "I attended the meeting on Monday.",  # calque, preposition
    "He told me that he would come back soon.",  # verb_pattern
    "Let me help you with your bags.",  # verb_form
    "She has gone to London for the weekend.",  # verb_form
    "She is studying for her exams.",  # verb_form
    "I look forward to seeing you next week.",  # verb_form
    "I went to the shop to buy some milk.",  # purpose_for
    "If I had more time, I would travel more.",  # verb_tense
    "Life is hard sometimes.",  # generic_the
    "We usually play tennis after work.",  # generic_the, adverb_position
    "I speak English and a little French.",  # generic_the, capitalisation
    "I made a mistake in my homework.",  # collocation
    "My sister depends on her parents.",  # preposition
    "He is married to a doctor from Mexico.",  # preposition
    "The book that I read last summer was interesting.",  # pronoun
    "Please turn off the lights when you leave.",  # word_confusion
    "It was quite cold, so we stayed inside.",  # word_confusion
    "I am hungry, so I will have lunch now.",  # calque
    "I discussed the plan with my boss.",  # calque
    "She became a nurse after a long and difficult course.",  # profession_article
    "They came home late because the bus was slow.",  # preposition (go home)
    "I don't want to lose my keys again.",  # word_confusion
    "Our teacher explained the rules to us very clearly.",
    "A lot of people think that the environment is important.",  # spelling (alot)
    "We didn't go anywhere last weekend.",  # double_negation
    "He has a beautiful garden and three small dogs.",  # adjective_order
    "My grandmother bought an expensive dress for the wedding.",  # adjective_order, a_an
]


@pytest.fixture(scope="module")
def nlp():
    return load_pipeline()


@pytest.fixture(scope="module")
def docs(nlp):
    return list(nlp.pipe(SENTENCES))


@pytest.fixture(scope="module")
def sample(nlp, docs):
    """Pairs of the sentences under 60 seeds (3,420 pairs)."""
    return [Injector(seed, nlp=nlp).inject_doc(doc, i) for seed in range(60) for i, doc in enumerate(docs)]


def check_pair(pair: Pair) -> None:
    items = split_gloss(pair.gloss)
    assert (pair.source != pair.corrected) == (pair.gloss != NO_ERRORS_GLOSS), pair
    assert len(items) == len(pair.categories) and pair.gloss.count("; ") == max(len(items) - 1, 0), pair
    assert [id_of(i.label) for i in items] == list(pair.categories), pair
    for item in items:
        assert item.original and item.replacement and item.original != item.replacement, pair
        assert item.original in pair.source and item.replacement in pair.corrected, pair
    edits = diff_edits(pair.source, pair.corrected, pair.gloss)
    assert bool(edits) == bool(items), pair
    assert all(e.category != OTHER for e in edits), (pair, edits)
    assert {e.category for e in edits} == set(pair.categories), (pair, edits)


def test_every_pair_is_exact_and_its_gloss_reads_back(sample, docs):
    for k, pair in enumerate(sample):
        assert pair.corrected == SENTENCES[k % len(docs)]
        check_pair(pair)


def test_a_third_stay_correct_and_most_erroneous_ones_have_one_error(sample):
    n_errors = collections.Counter(len(p.categories) for p in sample)
    assert 0.30 <= n_errors[0] / len(sample) <= 0.45
    erroneous = len(sample) - n_errors[0]
    assert n_errors[1] / erroneous >= 0.6
    assert n_errors[2] > 0 and n_errors[3] > 0 and max(n_errors) == 3


def test_every_category_is_made(sample):
    made = collections.Counter(c for p in sample for c in p.categories)
    assert set(made) == set(INJECTED_CATEGORY_IDS), set(INJECTED_CATEGORY_IDS) - set(made)


def test_same_seed_same_pairs_other_seed_other_pairs(nlp):
    first = list(Injector(3, nlp=nlp).inject_many(SENTENCES))
    assert list(Injector(3, nlp=nlp).inject_many(SENTENCES, batch_size=7)) == first
    assert list(Injector(4, nlp=nlp).inject_many(SENTENCES)) != first
    assert [p.corrected for p in first] == SENTENCES


def test_worker_processes_give_the_same_pairs(nlp):
    sentences = SENTENCES[:24]
    assert list(Injector(5).inject_many(sentences, n_process=2, batch_size=8)) == list(
        Injector(5, nlp=nlp).inject_many(sentences)
    )


def test_rates_must_name_known_categories():
    with pytest.raises(ValueError, match="unknown"):
        Injector(0, rates={"spelling": 1.0, "speling": 1.0})
    with pytest.raises(ValueError):
        Injector(0, rates={"spelling": 0.0})


def only(category: str, nlp, sentence: str, seeds: int = 40) -> set[str]:
    """Every learner version of ``sentence`` that ``category`` alone makes over some seeds."""
    out = set()
    for seed in range(seeds):
        pair = Injector(seed, rates={category: 1.0}, nlp=nlp).inject(sentence)
        if pair.categories:
            assert pair.categories == (category,) * len(pair.categories)
            check_pair(pair)
            out.add(pair.source)
    return out


@pytest.mark.parametrize(
    ("category", "sentence", "expected"),
    [
        ("word_confusion", "Their house is near the river.", "There house is near the river."),
        ("word_confusion", "This car is bigger than mine.", "This car is bigger then mine."),
        ("word_confusion", "You're right, it's late.", "Your right, it's late."),
        ("spelling", "I stayed at home because I was ill.", "I stayed at home becouse I was ill."),
        ("spelling", "A lot of people came.", "Alot of people came."),
        ("determiner", "I have a car.", "I have car."),
        ("determiner", "We spent the summer in Spain.", "We spent the summer in the Spain."),
        ("verb_tense", "I saw him yesterday.", "I have seen him yesterday."),
        ("verb_tense", "If it rains, we will stay at home.", "If it will rain, we will stay at home."),
        ("verb_form", "I can swim very well.", "I can to swim very well."),
        ("verb_form", "I have gone to the bank.", "I have went to the bank."),
        ("verb_form", "She is studying for her exams.", "She is study for her exams."),
        ("agreement", "They were tired after the trip.", "They was tired after the trip."),
        ("agreement", "The students who live here are friendly.", "The students who lives here are friendly."),
        ("noun_number", "I have two children.", "I have two child."),
        ("noun_number", "One of my friends lives in Paris.", "One of my friend lives in Paris."),
        ("pronoun", "The man who lives next door is a doctor.", "The man which lives next door is a doctor."),
        ("pronoun", "I feel tired today.", "I feel myself tired today."),
        ("word_order", "I don't know what it is.", "I don't know what is it."),
        ("word_order", "The room is big enough.", "The room is enough big."),
        ("calque", "I attended the meeting yesterday.", "I assisted to the meeting yesterday."),
        ("calque", "We had a party for her birthday.", "We made a party for her birthday."),
        ("calque", "I am hungry.", "I have hunger."),
        ("past_irregular", "Yesterday I went to the beach.", "Yesterday I goed to the beach."),
        ("third_person", "My brother works in a bank.", "My brother work in a bank."),
        ("missing_subject", "It is raining.", "Is raining."),
        ("question_no_do", "Where do you live?", "Where you live?"),
        ("there_is_plural", "There are two cats in the garden.", "There is two cats in the garden."),
        ("people_plural", "People are friendly here.", "People is friendly here."),
        ("preposition", "He is married to a doctor.", "He is married with a doctor."),
        ("preposition", "It depends on the weather.", "It depends of the weather."),
        ("preposition", "I lived there for three years.", "I lived there during three years."),
        ("preposition", "I lived there for three years.", "I lived there since three years."),
        ("preposition", "We met on Monday.", "We met in Monday."),
        ("preposition", "I listen to music every day.", "I listen music every day."),
        ("preposition", "She visited her grandmother.", "She visited to her grandmother."),
        ("preposition", "He married her last year.", "He married with her last year."),
        ("preposition", "Despite the rain, we went out.", "Despite of the rain, we went out."),
        ("preposition", "She is good at tennis.", "She is good in tennis."),
        ("preposition", "We arrived at the station.", "We arrived to the station."),
        ("preposition", "The train leaves at 6.30.", "The train leaves in 6.30."),
        ("preposition", "They went shopping.", "They went to shopping."),
        ("preposition", "The glass was filled with water.", "The glass was filled of water."),
        ("preposition", "On the other hand, it is cheap.", "In the other hand, it is cheap."),
        ("calque", "Most of the people were tired.", "The most of the people were tired."),
        ("calque", "I want you to come with me.", "I want that you come with me."),
        ("calque", "I think so.", "I think that yes."),
        ("calque", "It is cold today.", "It makes cold today."),
        ("calque", "We had a great time at the beach.", "We passed a great time at the beach."),
        ("calque", "She has the same car as me.", "She has the same car that me."),
        ("collocation", "Can I ask a question?", "Can I make a question?"),
        ("collocation", "She made an effort to help.", "She did an effort to help."),
        ("collocation", "I missed the bus this morning.", "I lost the bus this morning."),
        ("collocation", "He always does his best.", "He always makes his best."),
        ("present_perfect", "I have been waiting for two hours.", "I am waiting for two hours."),
        ("present_perfect", "She has known him since she was a child.", "She knows him since she was a child."),
        ("present_perfect", "We have lived here for a long time.", "We live here for a long time."),
    ],
)
def test_a_category_makes_its_typical_mistake(nlp, category, sentence, expected):
    assert expected in only(category, nlp, sentence)


@pytest.mark.parametrize(
    ("category", "sentence"),
    [
        ("determiner", "I have a few friends."),  # "few friends" is another correct sentence
        ("word_confusion", "Where's my phone?"),  # no "Were's"
        ("missing_subject", "The car is old and it is slow."),  # "and is slow" is correct English
        ("past_irregular", "She begged him to stay."),  # begged is regular
        ("verb_form", "It's not gonna bite you."),  # gon|na is one word
        ("third_person", "He is a teacher."),  # be is agreement's, not third person's
        ("generic_the", "The life of my grandmother was hard."),  # a specific life takes "the"
        ("third_person", "My little brother still wets his bed."),  # "wet" is also the past
        ("determiner", "Vicky has got a lamb."),  # "got lamb" is correct English (the meat)
        ("determiner", "Aunt Elizabeth raised hers."),  # no "a hers"
        ("preposition", "He finally arrived at last."),  # at last is a fixed phrase
        ("preposition", "He is married with two children."),  # married with children is correct
        ("preposition", "I stayed at the hotel for the last three years."),  # during the last three years
        ("preposition", "We met at the station."),  # at/in the station are both correct
        ("preposition", "He approached a moment later."),  # a moment is no object of approach
        ("calque", "That's right."),  # only a person has reason
        ("calque", "I don't think so."),
        ("collocation", "I've made this trip before."),  # do a trip is heard too
        ("present_perfect", "I had lived there since 2015."),  # the past perfect is another tense
    ],
)
def test_no_mistake_where_it_would_be_correct_english(nlp, category, sentence):
    assert only(category, nlp, sentence, seeds=15) == set()


@pytest.mark.parametrize(
    ("sentence", "correct"),
    [
        ("He waited for three hours.", "He waited three hours."),
        ("She looked at the table.", "She looked in the table."),
        ("She looked at the table.", "She looked on the table."),
        ("Let's think about Spain.", "Let's think in Spain."),
        ("I was thinking of you.", "I was thinking about you."),
        ("He answered to his master.", "He answered his master."),
    ],
)
def test_preposition_never_makes_another_correct_sentence(nlp, sentence, correct):
    assert correct not in only("preposition", nlp, sentence, seeds=15)


def test_spelling_makes_non_words_and_leaves_names_alone(nlp):
    sentence = "Carlos and Maria visited Barcelona with their wonderful children in August because it was different."
    names = {"Carlos", "Maria", "Barcelona", "August"}
    made = only("spelling", nlp, sentence, seeds=60)
    assert len(made) >= 4
    for source in made:
        (changed,) = set(source.rstrip(".").split()) - set(sentence.rstrip(".").split())
        assert is_nonword(changed) and len(changed) >= 3 and changed not in names
        assert names <= set(source.rstrip(".").split())


def test_spelling_never_makes_a_word_of_a_bundled_word_list(nlp):
    words_file = Path(pytest.importorskip("errant").__file__).parent / "en" / "resources" / "en_GB-large.txt"
    if not words_file.exists():
        pytest.skip("errant's word list is not installed")
    english = set(words_file.read_text(encoding="utf-8").split())
    rng = random.Random(0)
    made = [c for doc in nlp.pipe(SENTENCES) for c in inj.RULES["spelling"](doc, rng)]
    assert len(made) > 40
    assert not [c.words for c in made if c.words[0].lower() in english]


def test_the_rate_table_covers_every_category_and_rates_md_agrees():
    assert set(RATES) == set(INJECTED_CATEGORY_IDS) == set(inj.APPLICABILITY) == set(inj.RULES)
    assert sum(p for _, p in inj.N_ERRORS) == pytest.approx(1.0)
    doc = (Path(inj.__file__).parent / "RATES.md").read_text(encoding="utf-8")
    total = sum(RATES.values())
    for cid, weight, basis in RATE_TABLE:
        assert f"| `{cid}` | {weight:,.0f} | {weight / total:.1%} | {basis} |" in doc, cid


def test_cli_writes_the_tsv_and_counts(tmp_path):
    from typer.testing import CliRunner

    from corrige.cli import app

    src = tmp_path / "sentences.txt"
    src.write_text("\n".join(SENTENCES[:20]) + "\n\nskipped\tline\n", encoding="utf-8")
    out = tmp_path / "pairs.tsv"
    result = CliRunner().invoke(app, ["corpus", "pairs", str(src), "--out", str(out), "--limit", "12", "--seed", "2"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["source", "corrected", "gloss", "categories"]
    assert len(rows) == 13 and all(len(r) == 4 for r in rows)
    assert [r[1] for r in rows[1:]] == SENTENCES[:12]
    assert "sin errores" in result.output and "12 pairs" in result.output


def test_cli_writes_the_template_grammar_as_pairs_that_train_reads(tmp_path):
    from typer.testing import CliRunner

    from corrige.cli import app
    from corrige.train.pairs import read_pairs
    from corrige.tutor.categories import SYNTHETIC_CATEGORY_IDS

    out = tmp_path / "synthetic.tsv"
    result = CliRunner().invoke(app, ["corpus", "synthetic", "--out", str(out), "--n", "60", "--seed", "3"])
    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["source", "corrected", "gloss", "categories"] and len(rows) == 61
    wrong = [r for r in rows[1:] if r[0] != r[1]]
    assert wrong and all(r[3] and set(r[3].split(",")) <= set(SYNTHETIC_CATEGORY_IDS) for r in wrong)
    assert all(r[2] == "sin errores" and not r[3] for r in rows[1:] if r[0] == r[1])
    assert len(list(read_pairs(out))) == 60
