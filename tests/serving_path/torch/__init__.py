"""First on the import path of every process the test session starts (tests/conftest.py,
`serving_install`): serving does not use torch and a serving install (`make serve`) has none,
but the test environment has it (the train, bench and dev extras), and spaCy, which a server
imports for lemminflect and its sentence splitter, imports torch whenever it can (thinc): seconds
of CPU at every server start. A test whose processes need torch takes this off (`with_torch`)."""

raise ImportError("torch is not installed in a serving install (tests/serving_path)")
