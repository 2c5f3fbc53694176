from engine_support import gate, poison  # noqa: F401  (fixtures)
