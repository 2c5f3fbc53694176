"""What every benchmark report shares: the `machine` record of what its figures were measured
on, a `Series` of latencies (n, p50, p95, mean), and writing a report as JSON."""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def blas_libraries() -> list[dict[str, Any]] | None:
    """The thread pools threadpoolctl sees (None without it), each marked when it is NumPy's own."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    import numpy as np

    keep = ("user_api", "internal_api", "version", "num_threads", "architecture", "threading_layer")
    numpy_pkg = Path(np.__file__).parent  # wheels ship NumPy's BLAS in numpy.libs/ (or numpy/.dylibs/)
    libs = []
    for info in threadpool_info():
        entry = {k: info[k] for k in keep if k in info}
        path = Path(info.get("filepath", ""))
        entry["library"] = path.name
        entry["used_by_numpy"] = numpy_pkg in path.parents or path.parent == numpy_pkg.parent / "numpy.libs"
        libs.append(entry)
    return libs


def numpy_blas(info: dict[str, Any]) -> list[str]:
    """NumPy's BLAS in a `machine_info` record, as "openblas 0.3.27 (1 threads)" (every BLAS when
    NumPy's cannot be told apart)."""
    blas = [lib for lib in info.get("blas") or [] if lib.get("user_api") == "blas"]
    return [
        f"{lib.get('internal_api')} {lib.get('version')} ({lib.get('num_threads')} threads)"
        for lib in [lib for lib in blas if lib.get("used_by_numpy")] or blas
    ]


def machine_info(blas_limit: str | None = None, torch: Any = None) -> dict[str, Any]:
    """The CPU, the cores this process may use, Python, NumPy and its BLAS, the load average;
    `blas_limit`: how BLAS was held (`corrige.model.blas`); `torch`: the reference's version and threads."""
    import numpy as np

    usable: int | None
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        usable = os.cpu_count()
    info: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "usable_cores": usable,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": blas_libraries(),
    }
    if blas_limit is not None:
        info["blas_limit"] = blas_limit
    if torch is not None:
        info["torch"] = torch.__version__
        info["torch_threads"] = torch.get_num_threads()
        info["omp_wait_policy"] = os.environ.get("OMP_WAIT_POLICY")
    if hasattr(os, "getloadavg"):
        info["load_average_1min"] = round(os.getloadavg()[0], 2)
    return info


@dataclass
class Series:
    name: str
    n: int
    p50_ms: float
    p95_ms: float
    mean_ms: float


def series_ms(name: str, samples_ms: list[float]) -> Series:
    import numpy as np

    ms = np.asarray(samples_ms, dtype=float)
    return Series(name, len(ms), float(np.percentile(ms, 50)), float(np.percentile(ms, 95)), float(ms.mean()))


def series(name: str, samples_s: list[float]) -> Series:
    """Latencies given in seconds, summarised in milliseconds."""
    import numpy as np

    return series_ms(name, (np.asarray(samples_s, dtype=float) * 1e3).tolist())


def write_json(path: Path, data: Any, console: Any = None, *, ensure_ascii: bool = True) -> None:
    """Write a report as indented JSON (anything not JSON as its string), making its folder; say so on `console`."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=ensure_ascii, default=str) + "\n", encoding="utf-8")
    if console is not None:
        console.print(f"wrote {path}")
