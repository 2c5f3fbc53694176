"""Synthetic training data from the course grammar.

A hand-written grammar of everyday English (`grammar`, `lexicon`, `morphology`), sentence
templates (`templates`, the `focus*` modules, gathered by `template_registry`), the learner
errors injected into them (`error_rules`, `error_catalogue`) and the train/dev/test splits
built from both (`data`). Training, the evaluation harness and the portal's quiz read it; the
serving code (`corrige.tutor`, `corrige.server`, the engine) never imports it.
"""
