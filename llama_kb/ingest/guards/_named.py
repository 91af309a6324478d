"""Credentials whose name stands beside them: name/value pairs and value children.

Many formats keep a setting as two fields, one naming it and one holding it, on one line or
on consecutive lines:

* Kubernetes ``env`` lists (``- name: DB_PASSWORD`` then ``value: ...``), ECS task
  definitions and Azure app settings (``{"name": "DB_PASSWORD", "value": "..."}``),
  CloudFormation parameters (``ParameterKey=DbPassword,ParameterValue=...``), Terraform and
  CI variables (``key = "API_TOKEN"`` then ``value = "..."``);
* an element, a key or a block naming a credential whose child holds the value
  (``<AdministratorPassword>`` then ``<Value>...</Value>``, ``password:`` then
  ``value: ...``, Terraform's ``variable "db_password" {`` then ``default = ...``).

The name must name a credential (:func:`~._assignments.names_credential`) and the value look
like a secret (:func:`~._values.looks_secret`), as for a plain assignment; or, on one line,
name a session cookie (a HAR file's ``{"name": "sessionid", "value": ...}``) with a random
value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from llama_kb.ingest.guards._assignments import names_credential
from llama_kb.ingest.guards._evidence import RANDOM, shape_score
from llama_kb.ingest.guards._values import looks_secret
from llama_kb.ingest.guards._words import SESSION_NAME

__all__ = ["named_value_findings"]

_NAME_KEY = r"['\"]?(?:name|key|parameter_?key|variable|var|setting)['\"]?"
_VALUE_KEY = r"['\"]?(?:value|parameter_?value|secret_?value|default)['\"]?"
_VALUE = r"(?P<value>\"[^\"\s]*\"|'[^'\s]*'|[^\s'\"#,;{}\[\]<>]+)"
_SAME_LINE = re.compile(
    rf"(?<![\w-]){_NAME_KEY}\s*[:=]\s*['\"]?(?P<name>[\w.-]+)['\"]?\s*[,;]?\s*"
    rf"{_VALUE_KEY}\s*[:=]\s*{_VALUE}",
    re.IGNORECASE,
)
# PowerShell and CLI parameters: ``-Name DbPassword -Value ...``
_FLAG_PAIR = re.compile(
    rf"(?<!\S)--?(?:name|key)\s+['\"]?(?P<name>[\w.-]+)['\"]?\s+--?value\s+{_VALUE}",
    re.IGNORECASE,
)
# A line that only names: ``- name: DB_PASSWORD``, ``<AdministratorPassword>``, ``password:``
_NAME_LINE = re.compile(
    rf"^\s*(?:-\s*)?(?:{_NAME_KEY}\s*[:=]\s*['\"]?(?P<name>[\w.-]+)['\"]?,?"
    r"|<(?P<tag>[\w.:-]+)(?:\s[^<>]*)?>|(?P<parent>[\w.-]+):"
    r"|(?:variable|param(?:eter)?|setting|secret)\s+['\"]?(?P<block>[\w.-]+)['\"]?\s*\{)\s*$",
    re.IGNORECASE,
)
_VALUE_LINE = re.compile(
    rf"^\s*(?:-\s*)?(?:{_VALUE_KEY}\s*[:=]\s*{_VALUE}|<(?P<vtag>value|default)>"
    r"(?P<element>[^<>\s]+)</(?P=vtag)>)",
    re.IGNORECASE,
)
_SESSION = re.compile(SESSION_NAME, re.IGNORECASE)
_LINES_APART = 2  # the value within two lines under its name


def named_value_findings(lines: Sequence[str]) -> Iterator[tuple[int, int, int]]:
    """``(line, start, end)`` of each credential held beside its name (line 1 is ``lines[0]``)."""
    for number, line in enumerate(lines, 1):
        flags = _FLAG_PAIR.finditer(line) if "alue" in line or "ALUE" in line else ()
        for match in (*_SAME_LINE.finditer(line), *flags):
            if _names_secret(match["name"], match["value"]):
                yield number, *_unquoted(match, "value")
        named = _NAME_LINE.match(line)
        if named is None:
            continue
        name = named["name"] or named["tag"] or named["parent"] or named["block"]
        if not names_credential(name):
            continue
        for offset, below in enumerate(lines[number : number + _LINES_APART], 1):
            value = _VALUE_LINE.match(below)
            if value is None:
                continue
            group = "value" if value["value"] is not None else "element"
            if looks_secret(value[group]):
                yield number + offset, *_unquoted(value, group)
            break


def _names_secret(name: str, value: str) -> bool:
    """A credential's name and a secret-looking value, or a session cookie's name and a random
    value (a HAR file's or a cookie jar's ``{"name": "sessionid", "value": ...}``)."""
    if names_credential(name):
        return looks_secret(value)
    return bool(_SESSION.fullmatch(name)) and shape_score(value.strip("'\"")) == RANDOM


def _unquoted(match: re.Match[str], group: str) -> tuple[int, int]:
    start, end = match.span(group)
    quoted = match[group][:1] in "'\"" and len(match[group]) > 1
    return (start + 1, end - 1) if quoted else (start, end)
