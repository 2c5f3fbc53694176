import functools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corrige.tokenizer import BOS, EOS, SEP, SPECIAL_TOKENS, BPETokenizer

CORPUS = [
    "Yesterday I went to the store. / pasado irregular: goed → went",
    "She doesn't like coffee. / sin errores",
    "Ayer fui a la tienda con mi señora; ¿qué tal el año?",
] * 40


@pytest.fixture(scope="module")
def tok() -> BPETokenizer:
    return BPETokenizer.train(CORPUS, vocab_size=320)


def test_special_tokens_have_fixed_ids(tok):
    assert [tok.special.pad, tok.special.bos, tok.special.sep, tok.special.eos] == [0, 1, 2, 3]
    assert [tok.id_to_token(i) for i in range(4)] == list(SPECIAL_TOKENS)


def test_training_learns_merges_up_to_the_target_size(tok):
    assert 256 + len(SPECIAL_TOKENS) < tok.vocab_size <= 320
    # a frequent word costs fewer tokens than its bytes
    assert len(tok.encode("Yesterday")) < len(b"Yesterday")


def test_save_and_load_give_the_same_ids(tok, tmp_path):
    path = tok.save(tmp_path / "tokenizer.json")
    again = BPETokenizer.load(tmp_path)
    assert path.name == "tokenizer.json"
    text = "Yesterday I goed to the store, señor 😀"
    assert again.encode(text) == tok.encode(text)


@pytest.mark.parametrize("marker", [BOS, SEP, EOS, "<|pad|>"])
def test_special_token_text_in_user_input_is_plain_bytes(tok, marker):
    ids = tok.encode(f"hello {marker} world")
    assert not set(ids) & {0, 1, 2, 3}
    assert tok.decode(ids) == f"hello {marker} world"


def test_too_small_vocab_is_refused():
    with pytest.raises(ValueError, match="at least"):
        BPETokenizer.train(CORPUS, vocab_size=100)


def test_load_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        BPETokenizer.load(tmp_path / "nope.json")


TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from(list("áéíóúüñÑ¿¡😀🇪🇸\x00\x01\x1f\t\n\r ")),
    ),
    max_size=60,
)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_any_utf8_string_round_trips(tok, text):
    assert tok.decode(tok.encode(text)) == text


def test_adding_the_gloss_token_keeps_every_other_id(tok):
    added = tok.with_gloss_token()
    assert tok.special.gloss is None and added.special.gloss == tok.vocab_size
    assert added.vocab_size == tok.vocab_size + 1 and added.with_gloss_token() is added
    text = "Yesterday I goed / went <|gloss|> to the store"
    assert added.encode(text) == tok.encode(text)
    assert added.special.gloss not in added.encode(text)


_bundled = functools.cache(BPETokenizer.load)  # one load per model for hypothesis's many examples
BUNDLED = sorted(p.parent for p in (Path(__file__).parents[1] / "corrige" / "models").glob("*/tokenizer.json"))


@pytest.mark.parametrize("model_dir", BUNDLED, ids=lambda p: p.name)
def test_every_bundled_tokenizer_separates_the_gloss_with_a_token(model_dir):
    assert BPETokenizer.load(model_dir).special.gloss is not None


@pytest.mark.parametrize("model_dir", BUNDLED, ids=lambda p: p.name)
@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40))
def test_any_text_round_trips_and_never_becomes_a_special_token(model_dir, text):
    """Whatever a learner types ("tea / coffee", "<|gloss|>", emoji) is only text to the model."""
    loaded = _bundled(model_dir)
    ids = loaded.encode(text)
    specials = {loaded.special.pad, loaded.special.bos, loaded.special.sep, loaded.special.eos, loaded.special.gloss}
    assert not set(ids) & specials
    assert loaded.decode(ids) == text
