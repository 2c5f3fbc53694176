"""`AnswerStream`: the corrected sentence of an answer, read token by token, is exactly what
`split_answer` takes once the answer is complete, for both answer formats (" / " as text and the
`<|gloss|>` token), and never shows a character of the separator or of the gloss."""

import pytest

from corrige.tokenizer import BPETokenizer
from corrige.tutor.token_codec import AnswerStream, encode_answer, split_answer

ANSWERS = [
    ("Yesterday I went to the store.", "pasado irregular: goed → went"),
    ("He doesn't want to come", "tercera persona: don't → doesn't"),
    ("Do you prefer tea / coffee?", "sin errores"),  # the corrected sentence holds the text separator
    ("Tea / coffee / milk: I like them all.", "sin errores"),
    ("It costs 5 /month, and / or less.", "sin errores"),  # "/" and " /" that are not the separator
    ("Él está aquí → there.", "mayúscula: él → Él"),  # multi-byte characters
]


@pytest.fixture(scope="module", params=["text separator", "gloss token"])
def tok(request) -> BPETokenizer:
    texts = [f"{c} / {g}" for c, g in ANSWERS] * 3
    return BPETokenizer.train(texts, vocab_size=400, min_frequency=1, gloss_token=request.param == "gloss token")


def read(stream: AnswerStream, ids: list[int]) -> list[str]:
    """The pieces it releases, each checked to extend a prefix of the corrected sentence."""
    return [piece for i in ids if (piece := stream.push(i))]


@pytest.mark.parametrize(("corrected", "gloss"), ANSWERS)
def test_the_released_text_is_the_corrected_sentence_and_nothing_else(tok, corrected, gloss):
    ids = [*encode_answer(tok, corrected, gloss), tok.special.eos]
    assert split_answer(tok, ids)[0] == corrected
    stream = AnswerStream(tok)
    seen = ""
    for i in ids:
        seen += stream.push(i)
        assert corrected.startswith(seen)  # never a character that is not the sentence's
    assert seen == stream.released == corrected


@pytest.mark.parametrize(("corrected", "gloss"), ANSWERS[:2])
def test_the_sentence_streams_before_the_answer_ends(tok, corrected, gloss):
    """Live: all of the sentence is out once the separator is, long before the gloss is written."""
    ids = encode_answer(tok, corrected, gloss)
    head = tok.encode(corrected)
    stream = AnswerStream(tok)
    pieces = read(stream, head)
    assert len(pieces) > 3 and corrected.startswith("".join(pieces))
    # with a gloss token the separator ends the sentence; with text the first tokens of " / gloss" do
    read(stream, ids[len(head) : len(head) + 3])
    assert stream.released == corrected


def test_the_full_stop_the_tutor_added_waits_and_is_dropped(tok):
    ids = [*encode_answer(tok, "I went home.", "pasado irregular: goed → went"), tok.special.eos]
    stream = AnswerStream(tok, drop_suffix=".")
    assert "".join(read(stream, ids)) == "I went home"
    inside = AnswerStream(tok, drop_suffix=".")  # a full stop the sentence goes on after is released
    assert "".join(read(inside, [*encode_answer(tok, "It costs 5. I paid.", "sin errores")])) == "It costs 5. I paid"


def test_a_tail_that_may_start_the_text_separator_waits(tok):
    ids = tok.encode("I went home /")
    stream = AnswerStream(tok)
    # with the gloss token, " /" is only text
    assert "".join(read(stream, ids)) == ("I went home" if tok.special.gloss is None else "I went home /")
    assert split_answer(tok, [*ids, tok.special.eos]) is None  # the tutor abstains: the server replaces it
