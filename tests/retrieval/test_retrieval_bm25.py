"""BM25 over the cards: tokenisation and the obvious cases."""

from corrige.tutor.retrieval import BM25Index, build_query, tokenize


def test_tokenize_folds_accents_and_keeps_function_words():
    assert tokenize("Preposición: I don't live IN Madrid") == ["preposicion", "i", "don't", "live", "in", "madrid"]


def test_bm25_finds_the_obvious_card(bm25_retriever):
    cases = {
        "married with": "preposition_married_to",
        "I have 20 years": "age_be",
        "It depends of the weather": "preposition_depend_on",
        "informaciones": "uncountable_information",
        "doble negación": "double_negation_any",
    }
    for text, card in cases.items():
        hits = bm25_retriever.search(text, k=1, mode="bm25")
        assert hits[0].card.id == card, text
        assert hits[0].bm25_rank == 1 and hits[0].dense_rank is None


def test_category_token_lifts_the_category(cards):
    index = BM25Index(cards)

    def ranks(categories):
        query = build_query("Yesterday I goed to the beach.", [("goed", "went")], categories)
        order = [cards[i].id for i, _ in index.rank(query.lexical_tokens())]
        return {c.id: order.index(c.id) if c.id in order else len(cards) for c in cards}, query

    plain, _ = ranks([])
    lifted, query = ranks(["past_irregular"])
    assert "cat_past_irregular" in query.lexical_tokens()
    assert lifted["past_irregular_frequent"] == 0
    same = [c.id for c in cards if c.category == "past_irregular"]
    assert all(lifted[c] <= plain[c] for c in same) and sum(lifted[c] for c in same) < sum(plain[c] for c in same)


def test_no_known_word_gives_no_bm25_hits(cards):
    assert BM25Index(cards).rank(["zzzz", "qqqq"]) == []
