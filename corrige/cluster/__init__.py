"""More than one server: replicas of the FastAPI app behind Ray Serve's HTTP proxy.

Ray is an optional extra (`pip install 'corrige[cluster]'`); nothing outside this package
imports it, and `corrige serve` without `--replicas` never loads this package.

* `replica.py`: the settings of a deployment (replica count, autoscaling bounds, the most
  requests in flight per replica) derived from the server's own settings, with no Ray import;
* `ray_serve.py`: the Ray Serve deployment (one FastAPI app, its engine process and its own
  metrics port per replica) and `run`, what `corrige serve --replicas N` calls;
* `metrics_port.py`: the per-replica `/metrics` listener Prometheus scrapes.
"""
