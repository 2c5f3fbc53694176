"""The tutor: sentence in, `Correction` out — or an honest abstention.

Precision comes first: a learner must never see a correct sentence "corrected" into a wrong
one. So the tutor returns the sentence unchanged, flagged as abstained, when the model's
output does not parse, rewrites an implausible share of the sentence, was unsure of any
token of the corrected sentence, or makes a change it was never taught (drops or invents a
content word, or writes a word it never saw: see `plausibility`), or when its gloss does not
describe the edits it made (see `consistency`).

The tutor turns sentences into prompts and model outputs into corrections; generating the
tokens is delegated (`Tutor.correct_many` runs a plain batched greedy loop; the server runs
the same prompts through the batching engine and calls `interpret`).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from dataclasses import fields as dataclass_fields
from pathlib import Path

from corrige.model.config import GPTConfig
from corrige.model.generate import greedy_generate_scored, lookup_greedy_generate_scored
from corrige.model.ngram import NgramLM
from corrige.model.numpy_gpt import KVCache, RuntimeWeights, prepare
from corrige.model.weights import CONFIG_FILE, config_from_hf, load_model
from corrige.tokenizer import BPETokenizer
from corrige.tutor import agreement, edit_checks
from corrige.tutor.answer_text import NO_ERRORS_GLOSS
from corrige.tutor.bundled import BUNDLED_MODEL, LM_MODEL
from corrige.tutor.bundled import MODELS_DIR as MODELS_DIR  # re-exported: importers of the paths from here
from corrige.tutor.bundled import READER_MODEL as READER_MODEL
from corrige.tutor.bundled import SEED_MODEL as SEED_MODEL
from corrige.tutor.bundled import engine_parts as engine_parts
from corrige.tutor.categories import OTHER
from corrige.tutor.consistency import GLOSS_CUT_SHORT, explain, gloss_disagreement, gloss_from_words, keep_explained
from corrige.tutor.drafting import AnswerDrafter
from corrige.tutor.edit_labels import CAPITALISED, load_word_tables, name_in_context
from corrige.tutor.edits import Edit, apply_edits, changed_spans, diff_edits, non_overlapping
from corrige.tutor.patterns import pattern_fixes
from corrige.tutor.plausibility import (
    common_word_capitalised,
    content_mismatch,
    load_known_words,
    load_word_counts,
    unknown_words,
)
from corrige.tutor.rescoring import Rescorer, RescoringConfig
from corrige.tutor.spelling import Speller, book_counts
from corrige.tutor.token_codec import AnswerStream, PromptTooLong, check_fits, encode_prompt, split_answer

ABSTAIN_GLOSS = "no estoy seguro: revisa la frase con tu profesor"


@dataclass(frozen=True)
class TutorConfig:
    max_new_tokens: int = 48  # corrected sentence + " / " + gloss + eos, for a short sentence
    gloss_tokens: int = 40  # room past a copy of the sentence: separator, a gloss of ~3 items, eos
    min_token_prob: float = 0.6  # below this on any token of the corrected sentence: abstain (tuned on dev)
    max_rewrite_share: float = 0.5  # share of source words an answer may change before we distrust it
    batch_size: int = 32
    repair_gloss: bool = False  # keep only the edits the gloss explains, instead of abstaining
    # when the gloss does not describe the edits, write it from the edits' own words (edit_labels)
    gloss_from_edits: bool = False
    spelling: bool = False  # fix non-words from the model's word counts (spelling.py) on top of its answer
    patterns: bool = False  # fix the learner patterns that are wrong wherever they occur (patterns.py)
    # one-word corrections a language model prefers (rescoring.py, over the model in models/lm)
    rescoring: bool = False
    # with a speller: the model reads the sentence with its non-words already fixed (a misspelt
    # word hides the grammar around it), and the answer is read against that sentence
    spell_first: bool = True
    # drop an agreement edit that gives the verb the other number than its subject's, as spaCy's
    # parser reads the corrected sentence (agreement.py): "The relation between parents and children is"
    check_agreement: bool = False


@dataclass(frozen=True)
class Correction:
    sentence: str
    corrected: str
    gloss: str
    edits: list[Edit] = field(default_factory=list)
    abstained: bool = False
    abstain_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    min_token_prob: float = 1.0
    # the tutor fixed something but left something it was unsure of, or a fix that needs another
    # (a tense's time word without its verb): "puede haber más errores en esta frase"
    more_errors: bool = False

    @property
    def changed(self) -> bool:
        return self.corrected != self.sentence


_SPACES = re.compile(r"\s+")


def normalize_sentence(sentence: str) -> tuple[str, bool]:
    """Collapse whitespace; add a final full stop when missing (the model always saw one).

    Returns the text to send to the model and whether a full stop was added, so the answer
    can drop it again: the learner's sentence is never changed for punctuation we invented.
    """
    text = _SPACES.sub(" ", sentence).strip()
    if text and text.rstrip(_CLOSERS)[-1:] not in (".", "?", "!"):  # 'thing."' has its stop already
        return text + ".", True
    return text, False


# what may close a sentence after its stop: a quote, a bracket ('He said: "It is late."')
_CLOSERS = "\"'”’)]»"


def rewrite_share(source: str, corrected: str) -> float:
    """Share of the source's words that the answer does not keep."""
    a, b = source.split(), corrected.split()
    kept = sum(block.size for block in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_matching_blocks())
    return 1.0 - kept / max(len(a), 1)


READ_CACHE_SIZE = 1024  # sentences whose spelled reading is kept between a prompt and its answer


class TutorFront:
    """The tutor without its model: sentences into prompts, generated tokens into corrections.

    What a server needs when the engine runs in another process, which loads the weights itself:
    the tokenizer, the model's configuration (its window), the tuned config and the known words.
    `Tutor` adds the weights and generates the tokens too.
    """

    def __init__(
        self,
        cfg: GPTConfig,
        tokenizer: BPETokenizer,
        config: TutorConfig | None = None,
        known_words: frozenset[str] | None = None,
        speller: Speller | None = None,
        rescorer: Rescorer | None = None,
    ) -> None:
        self.cfg = cfg
        self.tokenizer = tokenizer
        self.config = config or TutorConfig()
        self.known_words = known_words  # words seen in training; None skips the unknown-word check
        self.speller = speller
        self.rescorer = rescorer
        # `model_input` of the sentences read lately: a request's prompt and its answer read it once
        self._read: dict[tuple[str, TutorConfig], tuple[str, list[Edit]]] = {}

    @classmethod
    def load(cls, model_dir: str | Path | None = None, config: TutorConfig | None = None) -> TutorFront:
        """A model directory's tutor without its weights (`model.safetensors` is not read)."""
        directory = Path(model_dir) if model_dir else BUNDLED_MODEL
        cfg = config_from_hf(json.loads((directory / CONFIG_FILE).read_text(encoding="utf-8")))
        if config is None:
            config = tuned_config(directory)
        known = load_known_words(directory)
        if config.check_agreement and not agreement.available():
            config = replace(config, check_agreement=False)
        # one language model for both: the speller's choice in context and the rescoring
        lm = NgramLM.load(LM_MODEL) if config.spelling or config.rescoring else None
        speller = load_speller(directory, config, lm)
        return TutorFront(cfg, BPETokenizer.load(directory), config, known, speller, load_rescorer(config, lm=lm))

    @property
    def n_ctx(self) -> int:
        return self.cfg.n_ctx

    def warm_up(self) -> None:
        """Load now what the first corrections would otherwise load inside a learner's request:
        lemminflect's word tables (edit names, patterns), the speller's index and the agreement
        check's parser, a few seconds with the reader's settings."""
        if self.config.gloss_from_edits or self.config.patterns or self.speller is not None:
            load_word_tables()
        if self.speller is not None:
            self.speller.build_index()
        if self.config.check_agreement:
            agreement.parser()

    def model_input(self, sentence: str) -> tuple[str, list[Edit]]:
        """What the model reads for `sentence`: the sentence normalized (`normalize_sentence`),
        with the speller's fixes of its non-words applied where the config asks (`spell_first`),
        and those fixes (offsets in the normalized sentence)."""
        source = normalize_sentence(sentence)[0]
        if self.speller is None or not self.config.spell_first:
            return source, []
        key = (source, self.config)
        if key not in self._read:
            if len(self._read) >= READ_CACHE_SIZE:
                self._read.clear()
            self._read[key] = self._spelled_input(source)
        read, spelled = self._read[key]
        return read, list(spelled)

    def _spelled_input(self, source: str) -> tuple[str, list[Edit]]:
        assert self.speller is not None
        # not a word a fixed pattern changes ("goed": went, not the speller's "goes"), save its
        # capital alone ("wich one": which, then Which)
        own = self.speller.fixes(source)
        spelled = [e for e in self._fixes(source, capitals=False, spelled=own) if e in own]
        if not spelled:
            return source, []
        read = apply_edits(source, spelled)
        if not self._fits(read):
            return source, []  # a fix made it too long for the window ("alot" → "a lot"): as written
        return read, spelled

    def _fits(self, text: str) -> bool:
        try:
            check_fits(len(encode_prompt(self.tokenizer, text)), self.min_answer_tokens(), self.n_ctx)
        except PromptTooLong:
            return False
        return True

    def build_prompt(self, sentence: str) -> list[int]:
        """Token ids of `<bos> sentence <sep>` (the sentence as the model reads it, `model_input`);
        raises `PromptTooLong` when the answer could not fit."""
        ids = encode_prompt(self.tokenizer, self.model_input(sentence)[0])
        check_fits(len(ids), self.min_answer_tokens(), self.n_ctx)
        return ids

    def answer_stream(self, sentence: str) -> AnswerStream:
        """Reads the model's answer to `sentence` as it is generated: the corrected sentence as
        `interpret` writes it when it keeps the model's answer (the full stop it added dropped)."""
        return AnswerStream(self.tokenizer, drop_suffix="." if normalize_sentence(sentence)[1] else "")

    def fits(self, sentence: str) -> bool:
        """Whether `build_prompt` takes the sentence (it and its answer fit the window): the
        sentence as written decides, since `model_input` keeps it so when its fixes would not fit
        (and asks nothing of the speller here, which a quiz bank's thousand checks would pay for)."""
        return self._fits(normalize_sentence(sentence)[0])

    def min_answer_tokens(self) -> int:
        """Room the answer needs at least: a copy of a longest-case sentence plus a short gloss."""
        return min(self.config.max_new_tokens, self.n_ctx // 2)

    def max_new_tokens_for(self, prompt_len: int) -> int:
        """The answer copies the sentence (about `prompt_len` tokens) and adds a gloss; the window caps it."""
        return min(max(self.config.max_new_tokens, prompt_len + self.config.gloss_tokens), self.n_ctx - prompt_len)

    def interpret(
        self, sentence: str, token_ids: Sequence[int], logprobs: Sequence[float], prompt_tokens: int = 0
    ) -> Correction:
        """Turn the generated tokens into a `Correction`, abstaining when the output is not trustworthy;
        then add the fixes the model's answer left to make, where the config asks for them: non-words
        (`spelling.py`) and fixed learner patterns (`patterns.py`)."""
        correction = self._read_spelled_answer(sentence, token_ids, logprobs, prompt_tokens)
        if correction.edits:  # the model's edits the sentence shows to be wrong (`edit_checks.py`)
            common = self.speller.is_common if self.speller is not None else None
            spelled = self.speller.fixes(correction.sentence) if self.speller is not None else []
            correction = _without_wrong_edits(correction, common, spelled)
        unsure = correction.abstained  # the model wanted a change it was not sure of
        if self.speller is not None or self.config.patterns or self.rescorer is not None:
            correction = self._add_fixes(correction)
        correction = name_what_changed(correction)
        if self.config.check_agreement and correction.edits:
            correction = _agree_with_subject(correction)
        if self.rescorer is not None and correction.edits:
            correction = _without_unwanted_articles(correction, self.rescorer, self.config.patterns)
        if correction.edits:
            correction = _outside_quotations(correction)
        if unsure and correction.edits and not correction.more_errors:
            correction = replace(correction, more_errors=True)
        return correction

    def _read_spelled_answer(
        self, sentence: str, token_ids: Sequence[int], logprobs: Sequence[float], prompt_tokens: int
    ) -> Correction:
        """The model's answer read against the sentence it read (`model_input`), then told as a
        correction of the learner's own sentence: the speller's fixes and the model's edits, each
        named. An abstention is the learner's sentence unchanged (the fixes come back in
        `_add_fixes`), and so is an answer whose edits and fixes cannot be told apart."""
        read, spelled = self.model_input(sentence)
        if not spelled:
            return self._read_answer(sentence, token_ids, logprobs, prompt_tokens)
        source, added_stop = normalize_sentence(sentence)
        c = self._read_answer(_drop_added_stop(read, added_stop), token_ids, logprobs, prompt_tokens)
        original = _drop_added_stop(source, added_stop)
        if not c.abstained:
            # a model's edit of a word the speller fixed is named as the model named it (dont →
            # don't → doesn't: "tercera persona"), the rest as the speller's and the model's own
            named = [*_through(c.edits, spelled, original), *spelled, *c.edits]
            edits = diff_edits(original, c.corrected, explain(named))
            if all(e.category != OTHER for e in edits):
                return replace(c, sentence=original, gloss=explain(edits), edits=edits)
        reason = c.abstain_reason if c.abstained else "unexplained"
        return replace(
            c,
            sentence=original,
            corrected=original,
            gloss=ABSTAIN_GLOSS,
            edits=[],
            abstained=True,
            abstain_reason=reason,
        )

    def _fixes(self, text: str, capitals: bool = True, spelled: list[Edit] | None = None) -> list[Edit]:
        """The patterns' and the speller's edits of `text` (`spelled`, where already found), in order,
        none overlapping another; a pattern's first where both change a word ("teached": taught, not
        the speller's "reached"); without `capitals`, the patterns that only give a word its capital
        are left out."""
        if spelled is None:
            spelled = self.speller.fixes(text) if self.speller is not None else []
        patterns = pattern_fixes(text) if self.config.patterns else []
        if not capitals:
            patterns = [p for p in patterns if p.category != "capitalisation"]
        return non_overlapping(patterns + spelled)

    def _prefer_patterns(self, c: Correction) -> Correction:
        """`c` with a pattern's edit of the learner's sentence instead of a model's edit inside the
        same words that says otherwise ("I enjoy to meet you": the model's "enjoy meet", the
        pattern's "enjoy meeting"): where a pattern fires it is right, and the model may not be."""
        if c.abstained or not c.edits or not self.config.patterns:
            return c
        fired = pattern_fixes(c.sentence)
        c = _named_as_patterns(c, fired)
        # a rule whose words the answer has ("is 51 years old") agrees with it, however the edits were
        # cut; whole words: "go" is not in "didn't gone"
        rules = [r for r in fired if not _has_words(c.corrected, _with_next_word(r, c.sentence))]
        overruled = [e for e in c.edits if any(_overruled_by(e, r) for r in rules)]
        if not overruled:
            return c
        chosen = non_overlapping([*rules, *(e for e in c.edits if e not in overruled)])
        corrected = apply_edits(c.sentence, chosen)
        edits = diff_edits(c.sentence, corrected, explain(chosen))
        if any(e.category == OTHER for e in edits):
            return c
        return replace(c, corrected=corrected, gloss=explain(edits), edits=edits)

    def _add_fixes(self, c: Correction) -> Correction:
        """`c` with the fixes of what its corrected sentence still gets wrong, each explained
        ("ortografía: wich → which"). An abstention (the model's answer not trusted) gets the
        fixes of the learner's own sentence, which do not depend on that answer."""
        c = self._prefer_patterns(c)
        fixes = self._fixes(c.corrected)
        corrected = apply_edits(c.corrected, fixes) if fixes else c.corrected
        # then the one-word corrections the language model prefers, around what is already changed
        rescored = self.rescorer.fixes(corrected, changed_spans(c.sentence, corrected)) if self.rescorer else []
        if not fixes and not rescored:
            return c
        corrected = apply_edits(corrected, rescored)
        # the model's edits and the fixes, each named in a gloss, so that diff_edits categorises them all
        kept = [] if c.abstained else c.edits
        named = [*_through(fixes, kept, c.sentence), *kept, *fixes, *rescored]
        edits = diff_edits(c.sentence, corrected, explain(named))
        if any(e.category == OTHER for e in edits):
            return c  # the two sets of edits could not be told apart: keep the model's answer
        return replace(c, corrected=corrected, gloss=explain(edits), edits=edits, abstained=False, abstain_reason=None)

    def _read_answer(
        self, sentence: str, token_ids: Sequence[int], logprobs: Sequence[float], prompt_tokens: int
    ) -> Correction:
        source, added_stop = normalize_sentence(sentence)
        tok = self.tokenizer
        finished = bool(token_ids) and token_ids[-1] == tok.special.eos
        parsed = split_answer(tok, token_ids) if finished else None
        n_out = len(token_ids)
        if parsed is None:
            return self._abstain(source, added_stop, "unparsable", prompt_tokens, n_out, 0.0)
        # the model is judged on the corrected sentence: the tokens before the separator
        corrected, gloss, n_corrected = parsed
        probs = [math.exp(lp) for lp in logprobs[: max(n_corrected, 1)]]
        min_prob = min(probs) if probs else 1.0
        if corrected != source and min_prob < self.config.min_token_prob:
            return self._abstain(source, added_stop, "low_confidence", prompt_tokens, n_out, min_prob)
        if rewrite_share(source, corrected) > self.config.max_rewrite_share:
            return self._abstain(source, added_stop, "rewrite_too_large", prompt_tokens, n_out, min_prob)
        if corrected != source:
            reason = content_mismatch(source, corrected)
            if reason is None and self.known_words is not None and unknown_words(source, corrected, self.known_words):
                reason = "unknown_word"
            if reason is None and common_word_capitalised(source, corrected, CAPITALISED):
                reason = "common_word_capitalised"
            if reason:
                return self._abstain(source, added_stop, reason, prompt_tokens, n_out, min_prob)
        if corrected == source:
            gloss = NO_ERRORS_GLOSS
        original = _drop_added_stop(source, added_stop)
        corrected = _drop_added_stop(corrected, added_stop)
        edits = diff_edits(original, corrected, gloss)
        if not edits:  # whatever the gloss says, nothing changed: "sin errores", never a named edit
            corrected, gloss = original, NO_ERRORS_GLOSS
        disagreement = gloss_disagreement(original, corrected, gloss, edits)
        if disagreement == GLOSS_CUT_SHORT:  # the edits are right, their gloss left a small word out
            gloss, disagreement = explain(edits), None
        if disagreement and self.config.gloss_from_edits:
            named = gloss_from_words(original, edits, partial=True)
            if named is not None:
                corrected, gloss, edits = named
                disagreement = None
        if disagreement and self.config.repair_gloss:
            kept = keep_explained(original, edits, gloss)
            if kept is not None:
                corrected, gloss, edits = kept
                disagreement = None
        if disagreement:  # never explain an edit that was not made, nor make one left unexplained
            return self._abstain(source, added_stop, disagreement, prompt_tokens, n_out, min_prob)
        return Correction(
            sentence=original,
            corrected=corrected,
            gloss=gloss,
            edits=edits,
            prompt_tokens=prompt_tokens,
            completion_tokens=n_out,
            min_token_prob=min_prob,
        )

    def _abstain(self, source: str, added_stop: bool, reason: str, n_in: int, n_out: int, p: float) -> Correction:
        original = _drop_added_stop(source, added_stop)
        return Correction(original, original, ABSTAIN_GLOSS, [], True, reason, n_in, n_out, p)


# tenses, and the time words a tense's fix may change without changing the verb
TENSE_CATEGORIES = frozenset({"present_perfect", "verb_tense", "past_marker"})
_TIME_WORDS = frozenset("since for ago during from in at on already yet ever never just".split())


def _with_edits(c: Correction, kept: list[Edit], reason: str) -> Correction:
    """`c` left with the edits a check `kept`; with none, an abstention for `reason`: the model saw
    something to fix there, just not what it wrote."""
    if not kept:
        return replace(c, corrected=c.sentence, gloss=ABSTAIN_GLOSS, edits=[], abstained=True, abstain_reason=reason)
    return replace(c, corrected=apply_edits(c.sentence, kept), gloss=explain(kept), edits=kept)


QUOTES = re.compile(r'"[^"]*"|“[^”]*”')


def _outside_quotations(c: Correction) -> Correction:
    """`c` without its edits inside a quotation: words quoted are cited as written ('write "I am
    agree" instead of "I agree"', a song's line, a Spanish word), not the learner's own."""
    quoted = [m.span() for m in QUOTES.finditer(c.sentence)]
    if not quoted:
        return c
    kept = [e for e in c.edits if not any(a < e.end and e.start < b for a, b in quoted)]
    if len(kept) == len(c.edits):
        return c
    if not kept:
        return replace(c, corrected=c.sentence, gloss=explain([]), edits=[], more_errors=False)
    return replace(c, corrected=apply_edits(c.sentence, kept), gloss=explain(kept), edits=kept)


def _respells_a_common_word(e: Edit, common: Callable[[str], bool]) -> bool:
    """A spelling edit of one common word into another ("apps" → "apples")."""
    old, new = e.original.lower(), e.replacement.lower()
    return e.category == "spelling" and old.isalpha() and " " not in new and old != new and common(old)


def _agree_with_subject(c: Correction) -> Correction:
    """`c` without its agreement edits that go against the verb's subject (`agreement.py`); with none
    left, an abstention: the model saw something to fix there, just not that."""
    wrong = agreement.against_subject(c.sentence, c.edits)
    if not wrong:
        return c
    return _with_edits(c, [e for e in c.edits if e not in wrong], "agreement")


def _without_wrong_edits(
    c: Correction, common: Callable[[str], bool] | None = None, spelled: Sequence[Edit] = ()
) -> Correction:
    """`c` without the edits its own sentence shows to be wrong (`edit_checks.against_the_sentence`:
    *too many → to many*, *on the 15th → in*, *My grandparents moved → grandparent*...), nor a
    common word the model "spelt" as another (*apps → apples*; the speller's own fixes of `spelled`
    stand); with none left, an abstention, as for agreement."""
    wrong = edit_checks.against_the_sentence(c.sentence, c.edits)
    if common is not None:  # the model's own spelling edits; the speller's ("dont → don't") stand
        speller = {(s.start, s.end, s.replacement) for s in spelled}
        wrong += [
            e
            for e in c.edits
            if e not in wrong and (e.start, e.end, e.replacement) not in speller and _respells_a_common_word(e, common)
        ]
    if not wrong:
        return c
    return _with_edits(c, [e for e in c.edits if e not in wrong], "against_the_sentence")


def _named_as_patterns(c: Correction, rules: Sequence[Edit]) -> Correction:
    """`c` with a model's edit that a pattern makes word for word filed under the pattern's
    category, which is the more exact one ("The life → Life": "artículo genérico", whose card is
    about life and nature, not "artículo", whose card says a noun needs one)."""
    by_words = {(r.start, r.end, r.replacement): r.category for r in rules}
    named = [replace(e, category=by_words.get((e.start, e.end, e.replacement), e.category)) for e in c.edits]
    if named == c.edits:
        return c
    return replace(c, edits=named, gloss=explain(named))


def _without_unwanted_articles(c: Correction, rescorer: Rescorer, patterns: bool = False) -> Correction:
    """`c` without the articles it puts in that the language model likes the sentence better
    without (`Rescorer.unwanted_articles`: *It was spectacular → a spectacular*); with no edit
    left, an abstention, as for agreement."""
    unwanted = rescorer.unwanted_articles(c.sentence, c.edits)
    if unwanted and patterns:  # a fixed pattern's article stays ("works as engineer → as an engineer")
        # (inside the pattern's words: "is very good idea → is a very good idea" is told "very → a very")
        fired = pattern_fixes(c.sentence)
        unwanted = [e for e in unwanted if not any(r.start <= e.start and e.end <= r.end for r in fired)]
    if not unwanted:
        return c
    # an edit that also spelled the word anew keeps that part (espectacular → spectacular)
    kept = [
        e if e not in unwanted else replace(e, replacement=e.replacement.split()[1], category="spelling")
        for e in c.edits
        if e not in unwanted or e.replacement.split()[1].lower() != e.original.lower()
    ]
    return _with_edits(c, kept, "article")


def name_what_changed(c: Correction) -> Correction:
    """An edit named for what its neighbours show it is (`edit_labels.name_in_context`: *doesn't
    likes → like* is not a plural subject's agreement). An edit filed under a tense that changes
    no verb ("since → for" under "presente perfecto",
    the verb still "live") is named for what it changes, a preposition; unless another edit of a
    tense changes the verb (live → have lived), the tense is still to fix, so the correction says
    that more errors may remain."""
    renamed = False
    verb_changed = False  # another edit of the same tense changes the verb (live → have lived)
    edits = []
    for e in c.edits:
        words = f"{e.original} {e.replacement}".lower().split()
        in_context = name_in_context(c.sentence, e)
        if in_context is not None:
            e = replace(e, category=in_context)
            renamed = True
        elif e.category in TENSE_CATEGORIES and words and all(w in _TIME_WORDS for w in words):
            e = replace(e, category="preposition")
            renamed = True
        elif e.category in TENSE_CATEGORIES:
            verb_changed = True
        edits.append(e)
    if not renamed:
        return c
    return replace(c, edits=edits, gloss=explain(edits), more_errors=c.more_errors or not verb_changed)


class Tutor(TutorFront):
    """Corrects sentences with a trained model directory (weights + tokenizer)."""

    def __init__(self, weights: RuntimeWeights, front: TutorFront) -> None:
        """`front`'s tokenizer, config, known words and speller, over `weights` (the same model)."""
        super().__init__(weights.cfg, front.tokenizer, front.config, front.known_words, front.speller, front.rescorer)
        self.weights = weights
        # guesses the answer for speculative decoding, here and in the server's engine
        self.drafter = AnswerDrafter(front.tokenizer)

    @classmethod
    def load(cls, model_dir: str | Path | None = None, config: TutorConfig | None = None) -> Tutor:
        """A model directory's tutor; its `tutor.json` (the abstention threshold tuned for that model
        on the dev set) is the default config, which `config` replaces."""
        directory = Path(model_dir) if model_dir else BUNDLED_MODEL
        cfg, params = load_model(directory)
        return cls(prepare(params, cfg), TutorFront.load(directory, config))

    def correct(self, sentence: str) -> Correction:
        return self.correct_many([sentence])[0]

    def correct_many(self, sentences: Sequence[str]) -> list[Correction]:
        """Batched greedy decoding in the NumPy runtime, `batch_size` sentences at a time."""
        results: list[Correction] = []
        bs = self.config.batch_size
        for start in range(0, len(sentences), bs):
            chunk = sentences[start : start + bs]
            prompts = [self.build_prompt(s) for s in chunk]
            cache = KVCache.allocate(self.cfg, len(chunk))
            eos, limit = self.tokenizer.special.eos, max(self.max_new_tokens_for(len(p)) for p in prompts)
            # each row also stops at the window's end (then it has no eos and abstains); one
            # sentence alone decodes with prompt lookup, which gives the same tokens in fewer passes
            if len(chunk) == 1:
                gens = [
                    lookup_greedy_generate_scored(self.weights, cache, prompts[0], limit, eos, drafter=self.drafter)
                ]
            else:
                gens = greedy_generate_scored(self.weights, cache, prompts, limit, eos_id=eos)
            results += [
                self.interpret(s, g.tokens, g.logprobs, len(p)) for s, g, p in zip(chunk, gens, prompts, strict=True)
            ]
        return results


TUNED_CONFIG_FILE = "tutor.json"


def tuned_config(model_dir: Path) -> TutorConfig:
    """`TutorConfig` with the fields a model directory's `tutor.json` sets (none: the defaults)."""
    path = model_dir / TUNED_CONFIG_FILE
    if not path.is_file():
        return TutorConfig()
    fields = json.loads(path.read_text(encoding="utf-8"))
    known = set(TutorConfig.__dataclass_fields__)
    unknown = sorted(set(fields) - known)
    if unknown:
        raise ValueError(f"{path}: unknown settings {unknown}; known: {sorted(known)}")
    return TutorConfig(**fields)


def changed_settings(config: TutorConfig) -> dict[str, object]:
    """The fields of `config` that differ from the defaults (what a `tutor.json` sets)."""
    defaults = TutorConfig()
    return {
        name: getattr(config, name)
        for name in (f.name for f in dataclass_fields(config))
        if getattr(config, name) != getattr(defaults, name)
    }


def load_speller(model_dir: Path, config: TutorConfig, lm: NgramLM | None = None) -> Speller | None:
    """The speller over a model directory's word counts and the book counts, choosing in context
    with `lm` when given, when the config asks for one."""
    if not config.spelling:
        return None
    counts = load_word_counts(model_dir)
    if not counts:
        raise ValueError(f"{model_dir}: tutor.json asks for spelling, but {model_dir}/words.txt has no word counts")
    # the words the training texts hold, not the tutor's known words (their inflections, made up
    # by rule: "techer" and "leter" are there, and would hide learners' misspellings)
    return Speller(counts, books=book_counts(), lm=lm)


def load_rescorer(config: TutorConfig, lm_dir: Path = LM_MODEL, lm: NgramLM | None = None) -> Rescorer | None:
    """The language model's rescorer with its tuned margins, when the config asks for one (over
    `lm` when it is already loaded from `lm_dir`)."""
    if not config.rescoring:
        return None
    return Rescorer(lm or NgramLM.load(lm_dir), config=RescoringConfig.load(lm_dir))


def _with_next_word(rule: Edit, sentence: str) -> str:
    """What a rule writes, with the learner's next word where it writes a word as common as the
    purpose "to" or a one-word preposition ("to get": "want to improve" is not the rule's "to";
    "in Lima": "in the morning" is not the rule's "in")."""
    one_preposition = rule.category == "preposition" and " " not in rule.replacement.strip()
    if rule.category != "purpose_for" and not one_preposition:
        return rule.replacement
    after = re.match(r"\s*(\w+)", sentence[rule.end :])
    return f"{rule.replacement} {after.group(1)}" if after else rule.replacement


def _has_words(text: str, words: str) -> bool:
    """Whether `text` has `words` as whole words (case ignored)."""
    return re.search(rf"(?<!\w){re.escape(words)}(?!\w)", text, re.IGNORECASE) is not None


def _overruled_by(edit: Edit, rule: Edit) -> bool:
    return _inside_and_other(edit, rule) or _takes_its_preposition(edit, rule) or _verb_after_purpose(edit, rule)


def _verb_after_purpose(edit: Edit, rule: Edit) -> bool:
    """Whether `edit` changes the verb right after a rule's purpose "to" ("for get a job": the
    rule's "to get", not the model's "for getting"; "for watch films": not "for a watch")."""
    return rule.category == "purpose_for" and rule.end + 1 == edit.start


def _inside_and_other(edit: Edit, rule: Edit) -> bool:
    """Whether `edit` changes words inside `rule`'s span, to something else than `rule` does."""
    inside = rule.start <= edit.start and edit.end <= rule.end
    return inside and (edit.start, edit.end, edit.replacement) != (rule.start, rule.end, rule.replacement)


def _takes_its_preposition(edit: Edit, rule: Edit) -> bool:
    """Whether `edit` changes the word right before a rule's -ing, which the rule read as the
    preposition it follows ("tired of listen → of listening": the model's "of → to" goes)."""
    return rule.replacement.endswith("ing") and edit.end + 1 == rule.start and " " not in edit.original.strip()


def _through(edits: Sequence[Edit], earlier: Sequence[Edit], original: str) -> list[Edit]:
    """`edits` of the text `earlier` made of `original` that touch a word `earlier` changed, each
    as an edit of `original` (the learner's words where it stands, its replacement and category):
    "dont" spelled "don't", then "doesn't" is "dont → doesn't" under the later edit's name."""
    spans = []  # (start, end) of each earlier edit in the text it made, and the edit
    shift = 0
    for f in sorted(earlier, key=lambda f: f.start):
        spans.append((f.start + shift, f.start + shift + len(f.replacement), f))
        shift += len(f.replacement) - len(f.original)

    def to_original(pos: int, end: bool) -> int:
        moved = 0
        for start, stop, f in spans:
            # strictly inside a changed span, or at its edge on the side `pos` closes or opens
            if start <= pos <= stop and (start < pos < stop or pos == (stop if end else start)):
                return f.end if end else f.start
            if stop <= pos:
                moved += len(f.replacement) - len(f.original)
        return pos - moved

    out = []
    for e in edits:
        if any(e.start < stop and start < e.end for start, stop, _ in spans):
            a, b = to_original(e.start, False), to_original(e.end, True)
            out.append(Edit(a, b, original[a:b], e.replacement, e.category))
    return out


def _drop_added_stop(text: str, added_stop: bool) -> str:
    return text[:-1] if added_stop and text.endswith(".") else text
