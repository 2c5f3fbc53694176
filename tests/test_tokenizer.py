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
