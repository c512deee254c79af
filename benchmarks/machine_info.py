"""What machine a benchmark ran on, for the JSON every benchmark prints."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine(**extra: object) -> dict[str, object]:
    """CPU count and model, Python, OS, 1-minute load, plus ``extra`` versions."""
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "loadavg_1m": load,
        **extra,
    }
