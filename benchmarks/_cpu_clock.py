"""CPU time of the benchmark process and of local server processes, per side of a comparison.

Latency on a small machine follows the CPU every process spends, and when the servers run on
the same cores as the query process, their work is paid in the query's latency. The clock reads
this process's CPU time (all its threads: embedding included) and each server's from
``/proc/<pid>/stat`` (Linux; a server it cannot read is left out), so a benchmark can say how
much CPU one question costs where.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class CpuClock:
    """CPU seconds so far of this process (``"client"``) and of the servers ``pids`` names."""

    def __init__(self, pids: Mapping[str, int] | None = None) -> None:
        self.pids = dict(pids or {})
        self.spent: dict[str, dict[str, float]] = {}

    def read(self) -> dict[str, float]:
        """Seconds of CPU each process has used (user + system)."""
        found = {"client": time.process_time()}
        for name, pid in self.pids.items():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            found[name] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        return found

    def charge(self, side: str, work: Callable[[], T]) -> T:
        """Run ``work`` and add the CPU every process spent meanwhile to ``side``."""
        before = self.read()
        result = work()
        after = self.read()
        total = self.spent.setdefault(side, {})
        for name, seconds in after.items():
            if name in before:
                total[name] = total.get(name, 0.0) + seconds - before[name]
        return result

    def per_call_ms(self, calls: int) -> dict[str, dict[str, float]]:
        """Milliseconds of CPU per call, by side and process."""
        return {
            side: {name: round(1000 * s / max(calls, 1), 1) for name, s in spent.items()}
            for side, spent in self.spent.items()
        }
