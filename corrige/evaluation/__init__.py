"""Measuring the tutor: `corrige eval` and the retrieval benchmark.

`harness` runs the tutor over an evaluation set (the synthetic split of `corrige.synth.data`,
the hand-written sentences) and scores it with `edit_metrics` (exact match, edit
precision/recall/F0.5, false alarms, per category); `errant_scoring` gives ERRANT's span-level
scores for any parallel file; `retrieval_eval` measures rule-card retrieval. None of it serves a
request: the serving code never imports this package.
"""
