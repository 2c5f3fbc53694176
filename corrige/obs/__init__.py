"""Observability: request traces (OpenTelemetry), the local trace store, Prometheus metrics,
the latency budget and the percentile report. Nothing here imports FastAPI."""
