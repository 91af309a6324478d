"""What writing one knowledge item did, and the timestamps the layers stamp."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum


class WriteStatus(StrEnum):
    """What writing one item did."""

    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")
