"""detect-secrets' indirect-reference filter with a quick answer first: same answers."""

from __future__ import annotations

import pytest
from detect_secrets import settings as library_settings
from detect_secrets.filters.heuristic import is_indirect_reference as library_filter

from llama_kb.ingest.guards._library_filters import default_settings, is_indirect_reference

LINES = [
    "secret = get_secret_key()",
    "api_key: request.headers['apikey']",
    "password == config.get(name)",
    "token != os.environ[KEY]",
    "token = 'ghp_abc'  # (see the docs)",
    "He was born in Lyon (France) and studied law.",
    "(draft) key = value",
    "key = value(",
    "a ( b ) = c",
    "x=y[0]",
    "x = ) y (",
    "",
    "It was released in 1961 [citation needed]: a success (a big one).",
    "x" * 1200 + " = f(y)",
]


@pytest.mark.parametrize("line", LINES)
def test_the_quick_filter_answers_as_the_library_does(line: str) -> None:
    assert is_indirect_reference(line) == library_filter(line)


def test_the_settings_use_the_quick_filter_and_are_restored_after() -> None:
    quick = "llama_kb.ingest.guards._library_filters.is_indirect_reference"
    library = "detect_secrets.filters.heuristic.is_indirect_reference"
    with default_settings() as settings:
        assert quick in settings.filters and library not in settings.filters
        paths = {f.path for f in library_settings.get_filters()}
        assert quick in paths and library not in paths
    assert quick not in library_settings.get_settings().filters
