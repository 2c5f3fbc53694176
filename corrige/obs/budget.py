"""The latency budget: allocations per stage from a TOML file, compared with the stage times of
recorded traces.

Per stage: mean, p50, p95, the allocation, the burn rate and the share of the total; then the
latency formula with measured values,

    t_total = t_parse + t_tokenize + t_prefill + K·t_decode_step + t_detok + t_serialize

and the term that dominates it. A stage whose burn stays above 1.5 is flagged.

    budget = load_budget(model="seed")              # the profile the bundled budget.toml gives that model
    report = budget_report(TraceTable.from_traces(store.traces(last=1000)), budget)

Choices, and why:

* **The profile follows the model.** Without an explicit profile, the file's `[models.<name>]`
  entry for the served model (its directory's name) says which profile applies and why; a model
  without one gets `default_profile`, and the report says so (`Budget.why`).
* **Burn rate = mean / allocation**, the mean over the traces where the stage ran. Means add up:
  the stages' mean times add up to the mean request, so the stage burns explain the total's. A
  median would hide a bimodal stage: rule-card retrieval is skipped for a sentence without edits
  and answered from a cache for one seen before, so its median is ~0 while every new sentence
  with edits pays the encoder's ~10-20 ms. It is also what the `corrige:budget_burn_rate` gauge
  tracks (a moving average). The p50 burn is reported too (`burn_p50`).
* **No verdict on a small sample.** A stage is judged (over, warn, ok; flagged) only when it ran
  in at least `MIN_SAMPLES` (100) traces of the window, the fewest that have a p99 of their own
  rather than their maximum; below that its verdict is "too_few" and it is never flagged. A
  handful of requests under light load, one of them slow, would otherwise paint a stage red.
* **Sustained** burn > 1.5: the window's burn is above 1.5, *and* so is the burn of most (more
  than half) of the window's consecutive sub-windows (up to 5, at least 10 traces each). One
  slow outlier, or a burst, lifts one or two sub-windows, not most of them; a slowdown that lasts
  does.
* **The formula uses means**, because means add up and percentiles do not:
  `t_parse` = `validate.body`, `t_tokenize` = `tokenize.bpe`, `t_prefill` = `model.prefill`,
  K = the mean `tokens.output` of `model.decode`, `t_decode_step` = Σ decode time / Σ `model.steps`,
  and `t_detok + t_serialize` = `format.json` (one span turns the ids into text, the text into a
  correction and the correction into JSON). What the formula leaves out (guards, retrieval, cost,
  queueing, HTTP outside the stages) is the measured mean minus the formula.
"""

from __future__ import annotations

import logging
import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

from corrige.obs import spans as names
from corrige.obs.report import SELF, Distribution, TraceTable, json_number

logger = logging.getLogger(__name__)

BURN_LIMIT = 1.5
"""A sustained burn above 1.5x is a debt to pay."""
MIN_SAMPLES = 100
"""A stage is judged (coloured, flagged) only over at least this many traces of the window."""
MAX_SUB_WINDOWS = 5
MIN_PER_SUB_WINDOW = 10
BUDGETABLE_SPANS = frozenset({*names.STAGES, SELF})
"""What an allocation may name: the children of `http.request`, and the root's uncovered time."""


class BudgetError(ValueError):
    """A budget file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Allocation:
    name: str
    ms: float
    spans: tuple[str, ...]


@dataclass(frozen=True)
class Budget:
    profile: str
    description: str
    allocations: tuple[Allocation, ...]
    source: str  # the file it came from
    model: str | None = None  # the model it was chosen for (None: none named)
    why: str = ""  # why this profile applies

    @property
    def total_ms(self) -> float:
        return float(sum(a.ms for a in self.allocations))

    def stage_of(self, span_name: str) -> Allocation | None:
        return next((a for a in self.allocations if span_name in a.spans), None)


def bundled_budget_path() -> Path:
    return Path(str(resources.files("corrige.obs").joinpath("budget.toml")))


def _read(path: Path | None) -> tuple[dict, str]:
    path = path or bundled_budget_path()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BudgetError(f"{path}: cannot read the budget file ({exc.strerror or exc})") from exc
    try:
        return tomllib.loads(text), str(path)
    except tomllib.TOMLDecodeError as exc:
        raise BudgetError(f"{path}: not valid TOML: {exc}") from exc


def budget_profiles(path: Path | None = None) -> list[str]:
    data, source = _read(path)
    profiles = data.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise BudgetError(f"{source}: no [profiles.<name>] table")
    return list(profiles)


def choose_profile(data: dict, source: str, profile: str | None, model: str | None) -> tuple[str, str]:
    """(profile, why): the one asked for; else the one `[models.<model>]` names; else the default."""
    profiles = data["profiles"]
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise BudgetError(f"{source}: `models` must be a table of [models.<name>] entries")
    for name, entry in models.items():
        if not isinstance(entry, dict) or set(entry) != {"profile", "why"}:
            raise BudgetError(f"{source}: models.{name} must have exactly `profile` and `why`")
        if entry["profile"] not in profiles:
            raise BudgetError(f"{source}: models.{name} names no profile of the file ({entry['profile']!r})")
    default = data.get("default_profile") or next(iter(profiles))
    if profile:
        why = "asked for"
    elif model in models:
        profile, why = models[model]["profile"], str(models[model]["why"])
    else:
        profile = default
        why = "the file's default profile" + (f": no [models.{model}] entry" if model else "")
    if profile not in profiles:
        raise BudgetError(f"{source}: no profile {profile!r}; the file has {', '.join(sorted(profiles))}")
    return profile, why


def load_budget(path: Path | None = None, profile: str | None = None, model: str | None = None) -> Budget:
    """One profile of a budget file (default: the bundled one), checked: known span names, each in
    one stage only, positive allocations, `total_ms` equal to their sum. Without `profile`, the one
    the file gives `model` (the served model's directory name), else its `default_profile`."""
    data, source = _read(path)
    unknown = set(data) - {"default_profile", "models", "profiles"}
    if unknown:
        raise BudgetError(
            f"{source}: unknown top-level key(s) {sorted(unknown)}; expected default_profile, models, profiles"
        )
    profiles = data.get("profiles")
    if not isinstance(profiles, dict) or not profiles:
        raise BudgetError(f"{source}: no [profiles.<name>] table")
    profile, why = choose_profile(data, source, profile, model)
    where = f"{source}: profiles.{profile}"
    table = profiles[profile]
    if not isinstance(table, dict):
        raise BudgetError(f"{where} is not a table")
    unknown = set(table) - {"description", "total_ms", "stages"}
    if unknown:
        raise BudgetError(f"{where}: unknown key(s) {sorted(unknown)}; expected description, total_ms, stages")
    stages = table.get("stages")
    if not isinstance(stages, list) or not stages:
        raise BudgetError(f"{where}: no [[profiles.{profile}.stages]] entries")
    allocations = []
    seen_names: set[str] = set()
    owner: dict[str, str] = {}
    for i, stage in enumerate(stages):
        at = f"{where}.stages[{i}]"
        if not isinstance(stage, dict):
            raise BudgetError(f"{at} is not a table")
        unknown = set(stage) - {"name", "ms", "spans"}
        if unknown:
            raise BudgetError(f"{at}: unknown key(s) {sorted(unknown)}; expected name, ms, spans")
        name, ms, span_names = stage.get("name"), stage.get("ms"), stage.get("spans")
        if not isinstance(name, str) or not name.strip():
            raise BudgetError(f"{at}: `name` must be a non-empty string")
        if name in seen_names:
            raise BudgetError(f"{at}: stage {name!r} appears twice")
        seen_names.add(name)
        if isinstance(ms, bool) or not isinstance(ms, int | float) or not math.isfinite(ms) or ms <= 0:
            raise BudgetError(f"{at} ({name}): `ms` must be a positive number of milliseconds, got {ms!r}")
        if not isinstance(span_names, list) or not span_names or not all(isinstance(s, str) for s in span_names):
            raise BudgetError(f"{at} ({name}): `spans` must be a non-empty list of span names")
        for span_name in span_names:
            if span_name not in BUDGETABLE_SPANS:
                raise BudgetError(
                    f"{at} ({name}): unknown span {span_name!r}; known: {', '.join(sorted(BUDGETABLE_SPANS))}"
                )
            if span_name in owner:
                raise BudgetError(
                    f"{at} ({name}): span {span_name!r} is already in stage {owner[span_name]!r} (counted twice)"
                )
            owner[span_name] = name
        allocations.append(Allocation(name, float(ms), tuple(span_names)))
    budget = Budget(profile, str(table.get("description", "")), tuple(allocations), source, model, why)
    total = table.get("total_ms")
    if total is not None:
        if isinstance(total, bool) or not isinstance(total, int | float):
            raise BudgetError(f"{where}: `total_ms` must be a number, got {total!r}")
        if not math.isclose(total, budget.total_ms, rel_tol=1e-9, abs_tol=1e-9):
            raise BudgetError(f"{where}: the stages add up to {budget.total_ms:g} ms but total_ms says {total:g}")
    return budget


# ---- the report ----


@dataclass(frozen=True)
class StageBudget:
    """One allocation against the traces. `allocation_ms` is None for time no allocation names."""

    name: str
    spans: tuple[str, ...]
    allocation_ms: float | None
    dist: Distribution  # over the traces where any of its spans ran
    share: float  # of the total time of all traces (absent spans count 0)
    burn: float  # mean / allocation
    burn_p50: float  # p50 / allocation
    window_burns: tuple[float, ...]  # burn (mean / allocation) of consecutive sub-windows, oldest first
    sustained: bool | None  # burn > BURN_LIMIT over the window and most sub-windows; None: too few traces

    @property
    def verdict(self) -> str | None:
        """The judgement: too_few (under MIN_SAMPLES: not judged), over (burn > BURN_LIMIT), warn
        (> 1), ok; None without an allocation or a burn."""
        if self.allocation_ms is None or not math.isfinite(self.burn):
            return None
        if self.dist.n < MIN_SAMPLES:
            return "too_few"
        return "over" if self.burn > BURN_LIMIT else "warn" if self.burn > 1 else "ok"

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "spans": list(self.spans),
            "allocation_ms": json_number(self.allocation_ms),
            "n": self.dist.n,
            "mean_ms": json_number(self.dist.mean_ms),
            "p50_ms": json_number(self.dist.p50_ms),
            "p95_ms": json_number(self.dist.p95_ms),
            "share": json_number(self.share),
            "burn": json_number(self.burn),
            "burn_p50": json_number(self.burn_p50),
            "window_burns": [json_number(b) for b in self.window_burns],
            "sustained": self.sustained,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class Term:
    """One term of the latency formula, with the spans it was measured from."""

    name: str
    source: str
    ms: float  # NaN where no trace had the span

    def to_dict(self) -> dict:
        return {"name": self.name, "source": self.source, "ms": json_number(self.ms)}


@dataclass(frozen=True)
class Formula:
    """t_total = t_parse + t_tokenize + t_prefill + K·t_decode_step + t_detok + t_serialize, measured."""

    terms: tuple[Term, ...]
    # K: mean decode steps per request. Without speculative decoding that is the output tokens
    # less the one the prefill makes; with it, several tokens can come from one step.
    k: float
    t_decode_step_ms: float
    measured_ms: float  # mean end-to-end time of the same traces

    @property
    def predicted_ms(self) -> float:
        return float(sum(t.ms for t in self.terms if math.isfinite(t.ms)))

    @property
    def other_ms(self) -> float:
        """What the formula leaves out: guards, retrieval, cost, queueing, HTTP outside the stages."""
        return self.measured_ms - self.predicted_ms

    @property
    def dominant(self) -> Term | None:
        known = [t for t in self.terms if math.isfinite(t.ms)]
        return max(known, key=lambda t: t.ms) if known else None

    def to_dict(self) -> dict:
        dominant = self.dominant
        predicted = self.predicted_ms
        return {
            "expression": "t_total = t_parse + t_tokenize + t_prefill + K·t_decode_step + t_detok + t_serialize",
            "terms": [t.to_dict() for t in self.terms],
            "K": json_number(self.k, 2),
            "t_decode_step_ms": json_number(self.t_decode_step_ms),
            "predicted_ms": json_number(predicted),
            "measured_ms": json_number(self.measured_ms),
            "other_ms": json_number(self.other_ms),
            "dominant": dominant.name if dominant else None,
            "dominant_share": json_number(dominant.ms / predicted) if dominant and predicted > 0 else None,
        }


@dataclass(frozen=True)
class BudgetReport:
    budget: Budget  # the profile judged against: its name, file, the model it was chosen for and why
    traces: int
    stages: tuple[StageBudget, ...]  # the allocations in file order, then unbudgeted time if any
    total: StageBudget  # the whole request against the whole budget
    formula: Formula
    instances: dict[str, int] = field(default_factory=dict)  # traces per server that served them

    @property
    def flagged(self) -> list[str]:
        return [s.name for s in self.stages if s.sustained]

    @property
    def too_few(self) -> list[StageBudget]:
        """The stages (and the total) not judged: fewer than MIN_SAMPLES traces in the window."""
        return [s for s in (*self.stages, self.total) if s.verdict == "too_few"]

    def to_dict(self) -> dict:
        budget = self.budget
        return {
            "profile": budget.profile,
            "description": budget.description,
            "source": budget.source,
            "model": budget.model,
            "why": budget.why,
            "traces": self.traces,
            "burn_statistic": "mean",
            "burn_limit": BURN_LIMIT,
            "min_samples": MIN_SAMPLES,
            "stages": [s.to_dict() for s in self.stages],
            "total": self.total.to_dict(),
            "flagged": self.flagged,
            "formula": self.formula.to_dict(),
            "instances": self.instances,
        }


def _sub_windows(n: int) -> int:
    return min(MAX_SUB_WINDOWS, n // MIN_PER_SUB_WINDOW)


def _burns(values: np.ndarray, allocation: float | None) -> tuple[float, float, tuple[float, ...], bool | None]:
    """(burn, p50 burn, sub-window burns, sustained) of per-trace stage times (NaN: absent)."""
    present = values[~np.isnan(values)]
    if allocation is None or present.size == 0:
        return math.nan, math.nan, (), None
    burn = float(present.mean()) / allocation
    burn_p50 = float(np.median(present)) / allocation
    k = _sub_windows(present.size)
    if k < 2:
        return burn, burn_p50, (), None
    windows = tuple(float(chunk.mean()) / allocation for chunk in np.array_split(present, k))
    if present.size < MIN_SAMPLES:  # too few to judge: the sub-windows are shown, nothing is flagged
        return burn, burn_p50, windows, None
    over = sum(b > BURN_LIMIT for b in windows)
    return burn, burn_p50, windows, bool(burn > BURN_LIMIT and over > k / 2)


def _stage(
    name: str, spans: tuple[str, ...], allocation: float | None, values: np.ndarray, total_ms: float
) -> StageBudget:
    burn, burn_p50, windows, sustained = _burns(values, allocation)
    share = float(np.nansum(values)) / total_ms if total_ms > 0 else math.nan
    return StageBudget(
        name, spans, allocation, Distribution.of(name, values), share, burn, burn_p50, windows, sustained
    )


def _stage_time(table: TraceTable, span_names: tuple[str, ...]) -> np.ndarray:
    """Per trace, the summed time of these spans; NaN where the trace has none of them."""
    columns = [table.stage_ms[s] for s in span_names if s in table.stage_ms]
    if not columns:
        return np.full(len(table), np.nan)
    stacked = np.vstack(columns)  # (S, T)
    absent = np.isnan(stacked).all(axis=0)
    summed = np.nansum(stacked, axis=0)
    summed[absent] = np.nan
    return summed


def _mean(values: np.ndarray) -> float:
    present = values[~np.isnan(values)]
    return float(present.mean()) if present.size else math.nan


def formula(table: TraceTable) -> Formula:
    def stage(span_name: str) -> float:
        return _mean(table.stage_ms[span_name]) if span_name in table.stage_ms else math.nan

    decode = table.stage_ms.get(names.DECODE, np.full(len(table), np.nan))
    with_steps = ~np.isnan(decode) & ~np.isnan(table.decode_steps) & (np.nan_to_num(table.decode_steps) > 0)
    steps = float(table.decode_steps[with_steps].sum())
    t_step = float(decode[with_steps].sum()) / steps if steps > 0 else math.nan
    k = float(table.decode_steps[with_steps].mean()) if steps > 0 else _mean(table.output_tokens)
    terms = (
        Term("t_parse", names.VALIDATE, stage(names.VALIDATE)),
        Term("t_tokenize", names.TOKENIZE, stage(names.TOKENIZE)),
        Term("t_prefill", names.PREFILL, stage(names.PREFILL)),
        Term("K·t_decode_step", f"{names.DECODE} ({names.OUTPUT_TOKENS}, {names.STEPS})", k * t_step),
        Term("t_detok + t_serialize", names.FORMAT, stage(names.FORMAT)),
    )
    return Formula(terms, k, t_step, _mean(table.e2e_ms))


def budget_report(table: TraceTable, budget: Budget) -> BudgetReport:
    total_ms = float(table.e2e_ms.sum())
    stages = [_stage(a.name, a.spans, a.ms, _stage_time(table, a.spans), total_ms) for a in budget.allocations]
    # stage spans the budget does not name (a span added to the request path since the file was
    # written) still take time: shown, unallocated, so the shares keep adding up to the whole
    unbudgeted = tuple(s for s in table.stages if budget.stage_of(s) is None)
    if unbudgeted:
        stages.append(_stage("unbudgeted", unbudgeted, None, _stage_time(table, unbudgeted), total_ms))
    total = _stage("total", (names.ROOT,), budget.total_ms, table.e2e_ms, total_ms)
    for stage in stages:
        if stage.sustained:
            logger.debug(
                "stage %r burns %.2fx its %.3g ms over the window", stage.name, stage.burn, stage.allocation_ms
            )
    return BudgetReport(
        budget=budget,
        traces=len(table),
        stages=tuple(stages),
        total=total,
        formula=formula(table),
        instances=table.instances,
    )
