"""The portal's interface text in Spanish (the default: the learners' language) and English.

Templates read `t.key`; the language comes from `?lang=` (remembered in a cookie), else the
cookie, else Spanish. Error categories have their own names: the Spanish ones are the
tutor's gloss labels (`corrige.tutor.categories`), so a learner sees the same words in the
gloss and on the progress page. Error codes have learner messages (`ERROR_MESSAGES`): a page
never shows the API's wording.
"""

from __future__ import annotations

from types import MappingProxyType

from corrige.tutor.categories import LABELS, OTHER

LANGS = ("es", "en")
DEFAULT_LANG = "es"

_ES = {
    "site": "corrige",
    "tagline": "Tu tutor de gramática inglesa",
    "skip": "Saltar al contenido",
    "nav_label": "Secciones",
    "nav_tutor": "Tutor",
    "nav_quiz": "Practicar",
    "nav_exam": "Examen",
    "nav_progress": "Mi progreso",
    "lang_label": "Idioma",
    "tutor_title": "Corrige tu texto",
    "tutor_intro": "Escribe o pega un texto en inglés (una frase, un correo, una carta): el tutor lo corrige, "
    "marca los cambios y explica cada regla.",
    "sentence_label": "Tu frase en inglés",
    "sentence_hint": "Por ejemplo:",
    "text_label": "Tu texto en inglés",
    "text_hint": "Hasta 5.000 caracteres. Por ejemplo:",
    "your_text": "Tu texto",
    "corrected_text": "Texto corregido",
    "changes_title": "Los cambios",
    "no_errors_text": "¡Sin errores! El texto está bien.",
    "accept": "Aceptar",
    "accepted": "Aceptado",
    "accept_all": "Aceptar todo",
    "accept_all_hint": "«Aceptar todo» pone el texto corregido en tu cuadro de texto.",
    "accepted_all": "Correcciones aplicadas: el texto corregido está en tu cuadro y el tutor lo ha revisado de nuevo.",
    "rechecked": "Cambio aplicado en tu cuadro. El tutor ha revisado el texto de nuevo:",
    "more_errors": "Puede haber más errores en esta frase: revísala con tu profesor.",
    "text_changed": "Has cambiado el texto después de corregirlo: pulsa «Corregir» otra vez para ver los cambios.",
    "unchecked_title": "Frases sin revisar",
    "unchecked_intro": "El tutor no ha podido revisar estas frases:",
    "unchecked_too_long": "Es demasiado larga para el tutor: prueba a dividirla en frases más cortas.",
    "unchecked_language": "No parece estar en inglés (parece {language}): el tutor solo corrige inglés.",
    "unchecked_not_english": "No parece estar en inglés: el tutor solo corrige inglés.",
    "unchecked_scripts": "Lleva letras de otro alfabeto: el tutor solo lee inglés.",
    "unchecked_no_words": "No tiene palabras que revisar.",
    "correct_button": "Corregir",
    "working": "Corrigiendo…",
    "result_title": "Corrección",
    "your_sentence": "Tu frase",
    "corrected": "Corregida",
    "removed": "quitado",
    "added": "añadido",
    "no_errors": "¡Sin errores! La frase está bien.",
    "abstained": "El tutor no está seguro de esta frase: revísala con tu profesor.",
    "explanation": "Explicación",
    "rules_title": "La regla",
    "example": "Ejemplo",
    "wrong_example": "Incorrecto",
    "right_example": "Correcto",
    "quiz_title": "Practicar",
    "quiz_intro": "Esta frase tiene un error. Escríbela bien.",
    "question": "Frase con un error",
    "category_hint": "Tipo de error",
    "answer_label": "Tu corrección",
    "check_button": "Comprobar",
    "next_question": "Otra pregunta",
    "grade_exact": "¡Exacto!",
    "grade_close": "Casi",
    "grade_wrong": "Todavía no",
    "grade_exact_note": "Tu respuesta es la corrección esperada.",
    "grade_close_note": "Has corregido el error; revisa los detalles marcados.",
    "grade_wrong_note": "Compara tu respuesta con la corrección.",
    "your_answer": "Tu respuesta",
    "expected": "Corrección esperada",
    "gloss": "El error",
    "tutor_says": "Corrección del tutor",
    "exam_title": "Examen",
    "exam_intro": "Diez frases, cada una con un error. Al final verás tu nota y repasarás los fallos.",
    "exam_start": "Empezar un examen",
    "exam_new": "Empezar otro examen",
    "exam_question": "Pregunta {n} de {total}",
    "exam_answer_button": "Responder",
    "exam_saved": "Respuesta guardada.",
    "exam_done": "Examen terminado",
    "exam_score": "Tu nota: {score} de {total}",
    "exam_review": "Repasa tus fallos",
    "exam_perfect": "¡Ningún fallo! Todas las respuestas son exactas.",
    "progress_title": "Mi progreso",
    "progress_intro": "Tus respuestas, por tipo de error.",
    "progress_empty": "Todavía no has respondido ninguna pregunta.",
    "col_category": "Tipo de error",
    "col_attempts": "Intentos",
    "col_exact": "Exactas",
    "col_close": "Casi",
    "col_wrong": "Fallos",
    "col_score": "Acierto",
    "col_time": "Fecha",
    "col_mode": "Modo",
    "col_question": "Pregunta",
    "col_answer": "Respuesta",
    "col_grade": "Resultado",
    "col_started": "Empezado",
    "col_status": "Estado",
    "mode_quiz": "práctica",
    "mode_exam": "examen",
    "exams_title": "Exámenes",
    "history_title": "Historial",
    "in_progress": "en curso ({n} de {total})",
    "back_home": "Volver al tutor",
    "error_title": "No se ha podido completar",
    "error_csrf": "El formulario ha caducado o no viene de esta página. Recarga la página e inténtalo otra vez.",
    "error_generic": "Algo ha fallado. Inténtalo de nuevo en unos segundos.",
    "error_not_found": "No existe esa página.",
    "error_rate_limited": "Demasiadas peticiones seguidas. Espera unos segundos y vuelve a intentarlo.",
    "error_too_large": "El texto es demasiado largo. Escribe una frase más corta.",
    "error_slow": "El envío ha tardado demasiado. Vuelve a intentarlo.",
    "error_empty_sentence": "Escribe una frase en inglés para que el tutor la corrija.",
    "error_sentence_too_long": "Esta frase es demasiado larga para el tutor: prueba a dividirla en dos.",
    "error_empty_text": "Escribe o pega un texto en inglés para que el tutor lo corrija.",
    "error_text_too_long": "El texto es demasiado largo: el tutor revisa hasta 5.000 caracteres. Divídelo en partes.",
    "error_no_words": "El texto no tiene palabras que revisar, solo signos o números.",
    "error_not_english": "El texto no parece estar en inglés. El tutor solo corrige textos en inglés.",
    "error_empty_answer": "Escribe tu corrección de la frase antes de comprobarla.",
    "error_answer_too_long": "Tu respuesta es demasiado larga. Escribe solo la frase corregida.",
    "error_characters": "El texto tiene caracteres que el tutor no puede leer. Escríbelo de nuevo, sin pegarlo.",
    "error_symbols": "El texto lleva marcas especiales que el tutor no acepta. Quítalas y vuelve a intentarlo.",
    "error_question_gone": "Esa pregunta ya no existe. Prueba con otra.",
    "error_exam_gone": "Ese examen no existe o es de otra persona.",
    "error_already_answered": "Ya respondiste a esta pregunta del examen.",
    "error_not_in_exam": "Esa pregunta no es de este examen. Vuelve al examen y responde a la pregunta que aparece.",
    "error_busy": "El tutor está muy ocupado ahora mismo. Espera unos segundos y vuelve a intentarlo.",
    "error_starting": "El tutor se está preparando. Vuelve a intentarlo en unos segundos.",
    "error_unavailable": "El tutor no está disponible ahora mismo. Vuelve a intentarlo más tarde.",
}

_EN = {
    "site": "corrige",
    "tagline": "Your English grammar tutor",
    "skip": "Skip to content",
    "nav_label": "Sections",
    "nav_tutor": "Tutor",
    "nav_quiz": "Quiz me",
    "nav_exam": "Exam",
    "nav_progress": "My progress",
    "lang_label": "Language",
    "tutor_title": "Correct your text",
    "tutor_intro": "Type or paste a text in English (a sentence, an email, a letter): the tutor corrects it, "
    "marks the changes and explains each rule.",
    "sentence_label": "Your English sentence",
    "sentence_hint": "For example:",
    "text_label": "Your English text",
    "text_hint": "Up to 5,000 characters. For example:",
    "your_text": "Your text",
    "corrected_text": "Corrected text",
    "changes_title": "The changes",
    "no_errors_text": "No errors! The text is fine.",
    "accept": "Accept",
    "accepted": "Accepted",
    "accept_all": "Accept all",
    "accept_all_hint": "“Accept all” puts the corrected text in your text box.",
    "accepted_all": "Corrections applied: the corrected text is in your box, and the tutor checked it again.",
    "rechecked": "Change applied in your box. The tutor checked the text again:",
    "more_errors": "There may be more errors in this sentence: check it with your teacher.",
    "text_changed": "You changed the text after it was corrected: press “Correct” again to see the changes.",
    "unchecked_title": "Sentences not checked",
    "unchecked_intro": "The tutor could not check these sentences:",
    "unchecked_too_long": "It is too long for the tutor: try splitting it into shorter sentences.",
    "unchecked_language": "It does not look like English (it looks like {language}): the tutor only corrects English.",
    "unchecked_not_english": "It does not look like English: the tutor only corrects English.",
    "unchecked_scripts": "It has letters from another alphabet: the tutor only reads English.",
    "unchecked_no_words": "It has no words to check.",
    "correct_button": "Correct",
    "working": "Correcting…",
    "result_title": "Correction",
    "your_sentence": "Your sentence",
    "corrected": "Corrected",
    "removed": "removed",
    "added": "added",
    "no_errors": "No errors! The sentence is fine.",
    "abstained": "The tutor is not sure about this sentence: check it with your teacher.",
    "explanation": "Explanation (Spanish)",
    "rules_title": "The rule",
    "example": "Example",
    "wrong_example": "Wrong",
    "right_example": "Right",
    "quiz_title": "Quiz me",
    "quiz_intro": "This sentence has one error. Write it correctly.",
    "question": "Sentence with an error",
    "category_hint": "Kind of error",
    "answer_label": "Your correction",
    "check_button": "Check",
    "next_question": "Another question",
    "grade_exact": "Exact!",
    "grade_close": "Close",
    "grade_wrong": "Not yet",
    "grade_exact_note": "Your answer is the expected correction.",
    "grade_close_note": "You fixed the error; check the marked details.",
    "grade_wrong_note": "Compare your answer with the correction.",
    "your_answer": "Your answer",
    "expected": "Expected correction",
    "gloss": "The error",
    "tutor_says": "The tutor's correction",
    "exam_title": "Exam",
    "exam_intro": "Ten sentences, each with one error. At the end you get a score and review your mistakes.",
    "exam_start": "Start an exam",
    "exam_new": "Start another exam",
    "exam_question": "Question {n} of {total}",
    "exam_answer_button": "Answer",
    "exam_saved": "Answer saved.",
    "exam_done": "Exam finished",
    "exam_score": "Your score: {score} out of {total}",
    "exam_review": "Review your mistakes",
    "exam_perfect": "No mistakes! Every answer is exact.",
    "progress_title": "My progress",
    "progress_intro": "Your answers, by kind of error.",
    "progress_empty": "You have not answered any question yet.",
    "col_category": "Kind of error",
    "col_attempts": "Attempts",
    "col_exact": "Exact",
    "col_close": "Close",
    "col_wrong": "Wrong",
    "col_score": "Score",
    "col_time": "Date",
    "col_mode": "Mode",
    "col_question": "Question",
    "col_answer": "Answer",
    "col_grade": "Grade",
    "col_started": "Started",
    "col_status": "Status",
    "mode_quiz": "quiz",
    "mode_exam": "exam",
    "exams_title": "Exams",
    "history_title": "History",
    "in_progress": "in progress ({n} of {total})",
    "back_home": "Back to the tutor",
    "error_title": "That did not work",
    "error_csrf": "The form has expired or did not come from this page. Reload the page and try again.",
    "error_generic": "Something went wrong. Try again in a few seconds.",
    "error_not_found": "There is no such page.",
    "error_rate_limited": "Too many requests in a row. Wait a few seconds and try again.",
    "error_too_large": "The text is too long. Write a shorter sentence.",
    "error_slow": "Sending took too long. Try again.",
    "error_empty_sentence": "Write a sentence in English for the tutor to correct.",
    "error_sentence_too_long": "This sentence is too long for the tutor: try splitting it in two.",
    "error_empty_text": "Write or paste a text in English for the tutor to correct.",
    "error_text_too_long": "The text is too long: the tutor checks up to 5,000 characters. Split it into parts.",
    "error_no_words": "The text has no words to check, only signs or numbers.",
    "error_not_english": "The text does not look like English. The tutor only corrects texts in English.",
    "error_empty_answer": "Write your correction of the sentence before checking it.",
    "error_answer_too_long": "Your answer is too long. Write just the corrected sentence.",
    "error_characters": "The text has characters the tutor cannot read. Type it again rather than pasting it.",
    "error_symbols": "The text has special marks that the tutor does not accept. Remove them and try again.",
    "error_question_gone": "That question no longer exists. Try another one.",
    "error_exam_gone": "That exam does not exist or belongs to someone else.",
    "error_already_answered": "You have already answered this exam question.",
    "error_not_in_exam": "That question is not part of this exam. Go back to the exam and answer the question shown.",
    "error_busy": "The tutor is very busy right now. Wait a few seconds and try again.",
    "error_starting": "The tutor is getting ready. Try again in a few seconds.",
    "error_unavailable": "The tutor is not available right now. Try again later.",
}

CATEGORY_NAMES_EN = {
    "past_irregular": "irregular past",
    "third_person": "third person -s",
    "a_an": "a / an",
    "profession_article": "article with jobs",
    "generic_the": "generic 'the'",
    "age_have": "age with 'be'",
    "adjective_plural": "plural adjective",
    "adjective_order": "adjective order",
    "missing_subject": "missing subject",
    "double_negation": "double negative",
    "comparative": "comparatives",
    "preposition": "prepositions",
    "verb_pattern": "verb patterns",
    "collocation": "collocations",
    "uncountable": "uncountable nouns",
    "there_is_plural": "there is / are",
    "purpose_for": "purpose (to, not for)",
    "present_perfect": "present perfect",
    "past_marker": "past time marker",
    "question_no_do": "missing auxiliary",
    "question_order": "question word order",
    "possessive_his_her": "his / her",
    "capitalisation": "capital letters",
    "people_plural": "'people' is plural",
    "adverb_position": "adverb position",
    "spelling": "spelling mistakes",
    "word_confusion": "confused words",
    "determiner": "articles and determiners",
    "verb_tense": "verb tense",
    "verb_form": "verb form",
    "agreement": "subject-verb agreement",
    "noun_number": "singular and plural nouns",
    "pronoun": "pronouns",
    "word_order": "word order",
    "calque": "Spanish calques",
    "punctuation": "punctuation (commas)",
    OTHER: "other change",
}
# the Spanish names are the gloss's labels, plus one for an edit no gloss item explains
CATEGORY_NAMES_ES = {**LABELS, OTHER: "otro cambio"}
CATEGORY_NAMES = {"es": CATEGORY_NAMES_ES, "en": CATEGORY_NAMES_EN}

# the languages a sentence of a text can be told to be in (corrige.tutor.text's stop words), by name
LANGUAGE_NAMES = {
    "es": {"es": "español", "fr": "francés", "pt": "portugués", "it": "italiano", "de": "alemán"},
    "en": {"es": "Spanish", "fr": "French", "pt": "Portuguese", "it": "Italian", "de": "German"},
}

# What a learner reads for each error code the portal's pages can meet (the API keeps its own
# precise messages): a key of the strings above, never the API's wording. A code not listed here
# gets `error_not_found` for a 404 and `error_generic` otherwise.
ERROR_MESSAGES = {
    "csrf_failed": "error_csrf",
    "rate_limited": "error_rate_limited",
    "work_limited": "error_rate_limited",
    "body_too_large": "error_too_large",
    "body_timeout": "error_slow",
    "empty_sentence": "error_empty_sentence",
    "prompt_too_long": "error_sentence_too_long",
    "empty_text": "error_empty_text",
    "text_too_long": "error_text_too_long",
    "no_words": "error_no_words",
    "not_english": "error_not_english",
    "empty_answer": "error_empty_answer",
    "answer_too_long": "error_answer_too_long",
    "invalid_characters": "error_characters",
    "invalid_encoding": "error_characters",
    "prompt_injection": "error_symbols",
    "question_not_found": "error_question_gone",
    "exam_not_found": "error_exam_gone",
    "already_answered": "error_already_answered",
    "question_not_in_exam": "error_not_in_exam",
    "not_found": "error_not_found",
    "overloaded": "error_busy",
    "deadline_exceeded": "error_busy",
    "not_ready": "error_starting",
    "engine_restarting": "error_starting",
    "engine_closed": "error_unavailable",
    "draining": "error_unavailable",
    "portal_unavailable": "error_unavailable",
    "replica_unavailable": "error_unavailable",
    # a malformed request, a wrong method, a failed validation, a bug: nothing the learner can fix
    "invalid_json": "error_generic",
    "unsupported_media_type": "error_generic",
    "method_not_allowed": "error_generic",
    "validation_error": "error_generic",
    "internal_error": "error_generic",
    "http_error": "error_generic",
}


class Text:
    """UI strings of one language: `t.key`, or `t("key", n=3)` to fill `{n}`."""

    def __init__(self, lang: str, strings: dict[str, str]) -> None:
        self.lang = lang
        self._strings = MappingProxyType(strings)

    def __getattr__(self, key: str) -> str:
        try:
            return self._strings[key]
        except KeyError:
            raise AttributeError(key) from None

    def __call__(self, key: str, **values: object) -> str:
        return self._strings[key].format(**values)

    def category(self, category_id: str) -> str:
        return CATEGORY_NAMES[self.lang].get(category_id, category_id.replace("_", " "))

    def language(self, code: str | None) -> str | None:
        """A language's name (`es` → "español" on a Spanish page), or None for one not named here."""
        return LANGUAGE_NAMES[self.lang].get(code or "")

    def error(self, code: str, status: int = 500) -> str:
        """The learner's message for an error code (see `ERROR_MESSAGES`)."""
        key = ERROR_MESSAGES.get(code, "error_not_found" if status == 404 else "error_generic")
        return self._strings[key]

    def error_messages(self) -> list[tuple[str, str]]:
        """(space-separated codes, message) for each message of `ERROR_MESSAGES`: what the pages'
        script shows for an API error."""
        codes: dict[str, list[str]] = {}
        for code, key in ERROR_MESSAGES.items():
            codes.setdefault(key, []).append(code)
        return [(" ".join(names), self._strings[key]) for key, names in codes.items()]


TEXTS = {"es": Text("es", _ES), "en": Text("en", _EN)}


def pick_lang(query: str | None, cookie: str | None) -> str:
    """`?lang=` wins, then the cookie, then Spanish."""
    for value in (query, cookie):
        if value in LANGS:
            return value
    return DEFAULT_LANG
