"""Every sentence template by base name: the general ones (`templates`) and the focused ones
(`focus*`), which build on `templates`' clauses; this module sits above both."""

from __future__ import annotations

from corrige.synth import focus as f
from corrige.synth import focus_noun_phrases as n
from corrige.synth import focus_people as p
from corrige.synth import focus_questions as q
from corrige.synth import focus_verbs as v
from corrige.synth.templates import (
    SAMPLER_ONLY,
    Template,
    t_act,
    t_be_adj,
    t_because,
    t_coord,
    t_freq,
    t_if,
    t_that,
    t_when,
)


def registry() -> dict[str, tuple[float, Template]]:
    """All templates by base name, with their sampling weights for correct sentences."""
    # fmt: off
    general: dict[str, tuple[float, Template]] = {
        "act": (6.0, t_act), "freq": (1.0, t_freq), "coord": (1.5, t_coord),
        "because": (1.0, t_because), "when": (1.0, t_when), "if": (0.7, t_if),
        "that": (0.8, t_that), "beadj": (0.6, t_be_adj),
        "prof": (1.0, f.t_prof), "age": (0.7, f.t_age), "weather": (0.8, f.t_weather),
        "itadj": (0.5, f.t_it_adj), "generic": (0.8, f.t_generic), "adjnp": (1.5, n.t_adjnp),
        "there": (1.0, n.t_there), "cmp": (0.8, n.t_cmp), "sup": (0.5, n.t_sup),
        "negany": (0.8, n.t_negany), "prep": (0.7, n.t_prep),
        "agree": (0.4, v.t_agree), "embedded": (0.5, q.t_embedded), "explain": (0.3, q.t_explain),
        "tell": (0.3, v.t_tell), "want": (0.4, v.t_want), "ing": (0.4, v.t_ing),
        "modal": (0.8, v.t_modal), "colloc": (0.8, v.t_colloc), "uncount": (0.6, v.t_uncount),
        "purpose": (0.7, v.t_purpose), "perf": (0.8, v.t_perf), "whbe": (0.8, q.t_whbe),
        "poss": (0.7, p.t_poss), "people": (0.5, p.t_people), "lang": (0.7, p.t_lang),
        "likevm": (0.4, p.t_likevm),
    }
    # fmt: on
    return general | {name: (0.0, fn) for name, (_, fn) in SAMPLER_ONLY.items()}
