"""The inference engine: a KV slot pool, four serving policies, streaming, cancellation and
admission control over the NumPy GPT runtime. It works on token ids only."""

from corrige.engine.config import EngineConfig, Policy
from corrige.engine.engine import Engine
from corrige.engine.errors import (
    DeadlineExceeded,
    EngineClosed,
    EngineError,
    EngineRestarting,
    InternalError,
    InvalidRequest,
    Overloaded,
)
from corrige.engine.request import FinishReason, RequestOutput, RequestStatus, SamplingParams, TokenEvent
from corrige.engine.stats import EngineSnapshot, RequestStats, StepStats
from corrige.engine.stream import RequestStream

__all__ = [
    "DeadlineExceeded",
    "Engine",
    "EngineClosed",
    "EngineConfig",
    "EngineError",
    "EngineRestarting",
    "EngineSnapshot",
    "FinishReason",
    "InternalError",
    "InvalidRequest",
    "Overloaded",
    "Policy",
    "RequestOutput",
    "RequestStats",
    "RequestStatus",
    "RequestStream",
    "SamplingParams",
    "StepStats",
    "TokenEvent",
]
