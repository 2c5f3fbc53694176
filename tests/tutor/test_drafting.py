"""The tutor's answer guesses: shaped like ``corrected <|gloss|> label: original → replacement <eos>``.

Answers are written here with "<gloss>" where the model writes its separator token."""

import asyncio

import pytest

from corrige.engine import Engine, EngineConfig, SamplingParams
from corrige.model.lookup import LookupDrafter
from corrige.tutor.agent import Tutor
from corrige.tutor.drafting import AnswerDrafter
from corrige.tutor.token_codec import encode_answer, encode_prompt


@pytest.fixture(scope="module")
def tutor() -> Tutor:
    return Tutor.load()


def replay(tutor: Tutor, sentence: str, answer: str):
    """An `AnswerLookup` for `sentence`, fed `answer` one token at a time: yields (answer so far, its guess)."""
    tok = tutor.tokenizer
    lookup = tutor.drafter.start(encode_prompt(tok, sentence))
    corrected, gloss = answer.split("<gloss>")
    answer_ids = [*encode_answer(tok, corrected, gloss), tok.special.eos]
    for i, token in enumerate(answer_ids):
        lookup.append(token)
        yield answer_ids[: i + 1], lookup.draft(16), answer_ids[i + 1 :]


def guess_after(tutor: Tutor, sentence: str, answer: str, prefix: str) -> tuple[str, str]:
    """The guess once the answer reads `prefix`, and what really follows (both as text, eos as <eos>)."""
    tok = tutor.tokenizer

    marks = {tok.special.eos: "<eos>", tok.special.gloss: "<gloss>"}

    def text(ids):
        return "".join(marks.get(i) or tok.decode([i]) for i in ids)

    for so_far, guess, rest in replay(tutor, sentence, answer):
        if text(so_far) == prefix:
            return text(guess), text(rest)
    raise AssertionError(f"the answer never reads {prefix!r}")


def test_a_copied_sentence_ends_with_the_separator_and_no_errors(tutor):
    guess, rest = guess_after(tutor, "We are happy.", "We are happy.<gloss>sin errores", "We")
    assert guess == rest == " are happy.<gloss>sin errores<eos>"


def test_a_changed_sentence_ends_with_the_separator_only(tutor):
    answer = "Yesterday I went to the store.<gloss>pasado irregular: goed → went"
    guess, _ = guess_after(tutor, "Yesterday I goed to the store.", answer, "Yesterday I went to")
    assert guess == " the store.<gloss>"


def test_after_a_label_the_item_and_eos_are_guessed_from_the_edit(tutor):
    answer = "Yesterday I went to the store.<gloss>pasado irregular: goed → went"
    guess, rest = guess_after(tutor, "Yesterday I goed to the store.", answer, answer.split(":")[0] + ":")
    assert guess == rest == " goed → went<eos>"
    # inside the item the guess goes on from where the model is
    guess, rest = guess_after(tutor, "Yesterday I goed to the store.", answer, answer.removesuffix(" → went"))
    assert guess == rest == " → went<eos>"


def test_two_edits_are_two_items_joined_by_a_semicolon(tutor):
    sentence = "She like cats and he have a dog."
    answer = "She likes cats and he has a dog.<gloss>tercera persona: like → likes; tercera persona: have → has"
    first, rest = guess_after(tutor, sentence, answer, answer.split(": ")[0] + ":")
    assert first == " like → likes;" and rest.startswith(first)
    second, rest = guess_after(tutor, sentence, answer, answer.rsplit(" have", 1)[0])
    assert second == rest == " have → has<eos>"


def test_a_wrong_label_guess_falls_back_to_plain_lookup(tutor):
    """A gloss the edits do not predict (the model widened the item) still gets guesses, never an error."""
    answer = "I am 20 years old.<gloss>edad con be: have 20 years → am 20 years old"
    for _, guess, _ in replay(tutor, "I have 20 years.", answer):
        assert isinstance(guess, list) and len(guess) <= 16


def test_answer_guesses_need_fewer_steps_than_plain_lookup_for_the_same_answers(tutor):
    sentences = ["Yesterday I goed to the store.", "She like cats.", "He don't want to come with us.", "We are happy."]
    prompts = [tutor.build_prompt(s) for s in sentences]
    eos = tutor.tokenizer.special.eos

    async def run(drafter):
        with Engine(tutor.weights, EngineConfig(policy="none", speculative_tokens=8), drafter=drafter) as engine:
            outputs = []
            for p in prompts:  # one at a time: the step counts do not depend on timing
                params = SamplingParams(max_tokens=tutor.max_new_tokens_for(len(p)), stop_token_ids=(eos,))
                outputs.append(await engine.generate(p, params))
            return [o.token_ids for o in outputs], engine.snapshot().steps

    plain_tokens, plain_steps = asyncio.run(run(LookupDrafter()))
    answer_tokens, answer_steps = asyncio.run(run(AnswerDrafter(tutor.tokenizer)))
    assert answer_tokens == plain_tokens
    assert answer_steps < plain_steps


@pytest.mark.parametrize("before", ["<gloss>", "; "])
def test_a_label_is_guessed_from_its_first_token_as_the_answer_cuts_it(tutor, before):
    """After `<|gloss|>` a label has no space before it, after "; " it has one: a word is cut into
    tokens differently with and without it. From its first token a label is guessed to its ":";
    labels that begin alike ("artículo a/an", "artículo genérico") get the rest of one of them."""
    from corrige.tutor.categories import CATEGORIES

    tok = tutor.tokenizer
    head = [*tok.encode("Yesterday I went to the store."), tok.special.gloss]
    if before == "; ":
        head += [*tok.encode("pasado irregular: goed → went"), tok.encode("; ")[0]]
    labels = {
        c.label: tok.encode(c.label + ":") if before == "<gloss>" else tok.encode("; " + c.label + ":")[1:]
        for c in CATEGORIES
    }
    missed = []
    for name, label in labels.items():
        lookup = tutor.drafter.start(encode_prompt(tok, "Yesterday I goed to the store."))
        for token in [*head, label[0]]:
            lookup.append(token)
        guess = lookup.draft(16)
        alike = [other[1:] for other in labels.values() if other[0] == label[0]]
        if not any(guess[: len(rest)] == rest for rest in alike) or (
            len(alike) == 1 and guess[: len(label) - 1] != label[1:]
        ):
            missed.append(name)
    assert not missed, f"labels not guessed after {before!r}: {missed}"


def test_before_the_first_token_the_guess_is_the_sentence_then_no_errors(tutor):
    """The prompt's own step checks a guess too: the learner's sentence, copied, then "sin errores"."""
    tok = tutor.tokenizer
    lookup = tutor.drafter.start(encode_prompt(tok, "We are happy."))
    expected = [*encode_answer(tok, "We are happy.", "sin errores"), tok.special.eos]
    assert lookup.draft(32) == expected
    assert lookup.draft(3) == expected[:3]
