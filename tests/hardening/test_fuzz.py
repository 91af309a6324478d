"""Property-based fuzzing (hypothesis) of the readers, the knowledge loader and the scanner.

The property everywhere: any input gives a result or a :class:`DocumentError`; never another
exception, a hang or a crash. Limits are tight so that each example stays fast.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hardening_helpers import make_docx, make_pdf
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llama_kb.config import LimitsConfig
from llama_kb.errors import DocumentError
from llama_kb.ingest.guards import SecretScanner, document_problem, use_limits
from llama_kb.ingest.readers import read_path, supported_suffixes
from llama_kb.knowledge.loader import parse_json
from llama_kb.knowledge.validation import validate_knowledge

pytestmark = pytest.mark.slow

LIMITS = LimitsConfig(
    max_file_bytes=200_000, max_decompressed_bytes=2_000_000, max_text_chars=50_000
)
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)

json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="fuzz") as name:
        yield Path(name)


def _read(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    with use_limits(LIMITS):
        try:
            result = read_path(path)
        except DocumentError:
            return
    for doc in result.documents:
        document_problem(doc, LIMITS)  # a verdict, never an exception


@FUZZ
@given(suffix=st.sampled_from(supported_suffixes()), data=st.binary(max_size=3000))
def test_readers_survive_random_bytes(workdir: Path, suffix: str, data: bytes) -> None:
    _read(workdir / f"random{suffix}", data)


@FUZZ
@given(suffix=st.sampled_from([".md", ".txt", ".html", ".jsonl"]), text=st.text(max_size=3000))
def test_text_readers_survive_random_text(workdir: Path, suffix: str, text: str) -> None:
    _read(workdir / f"text{suffix}", text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(
    lines=st.lists(
        json_values | st.fixed_dictionaries({"id": json_values, "text": json_values}), max_size=8
    )
)
def test_jsonl_reader_survives_any_json(workdir: Path, lines: list[Any]) -> None:
    text = "\n".join(json.dumps(line, allow_nan=True) for line in lines)
    _read(workdir / "records.jsonl", text.encode())


@pytest.fixture(scope="module")
def seeds(workdir: Path) -> dict[str, bytes]:
    return {
        ".pdf": make_pdf(["first page text", "second page"]),
        ".docx": make_docx(workdir / "seed.docx").read_bytes(),
    }


@FUZZ
@given(
    suffix=st.sampled_from([".pdf", ".docx"]),
    flips=st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), max_size=12),
    cut=st.integers(min_value=0, max_value=100),
)
def test_binary_readers_survive_damaged_files(
    workdir: Path, seeds: dict[str, bytes], suffix: str, flips: list[tuple[int, int]], cut: int
) -> None:
    data = bytearray(seeds[suffix])
    for position, value in flips:
        data[position % len(data)] = value
    _read(workdir / f"damaged{suffix}", bytes(data[: max(1, len(data) * (100 - cut) // 100)]))


SECTIONS = st.sampled_from(["metadata", "pieces", "graph"])


@FUZZ
@given(data=st.dictionaries(SECTIONS | st.text(max_size=5), json_values, min_size=1, max_size=4))
def test_knowledge_validation_survives_any_document(data: dict[str, Any]) -> None:
    try:
        plan = validate_knowledge(data, "<fuzz>")
    except DocumentError:
        return
    assert all(item.reason for item in plan.skipped)


@FUZZ
@given(
    pieces=st.lists(
        st.fixed_dictionaries(
            {"piece_id": json_values, "content": json_values},
            optional={"knowledge_type": json_values, "tags": json_values, "entity_id": json_values},
        ),
        max_size=5,
    )
)
def test_knowledge_validation_survives_malformed_pieces(pieces: list[Any]) -> None:
    with contextlib.suppress(DocumentError):
        validate_knowledge({"pieces": pieces}, "<fuzz>")


@FUZZ
@given(text=st.text(max_size=2000) | st.text(alphabet='[]{}",:0123456789 ', max_size=2000))
def test_knowledge_json_parsing_survives_any_text(text: str) -> None:
    with contextlib.suppress(DocumentError):
        parse_json(text, "<fuzz>")


@FUZZ
@given(text=st.text(max_size=1500))
def test_secret_scanner_survives_any_text(text: str) -> None:
    scanner = SecretScanner()
    for finding in scanner.scan(text):
        assert finding.line >= 1 and 0 <= finding.start <= finding.end
    scanner.redact(text)
