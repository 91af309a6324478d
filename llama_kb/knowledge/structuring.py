"""Turn an expert's free text into knowledge JSON with an LLM, then load it (seed 000, path A).

1. Credentials in the text are redacted before anything is sent (:func:`guards.redact`).
2. The LLM gets :data:`STRUCTURING_PROMPT`: extract entities, facts, procedures and
   relationships into the loader's JSON format, never credentials.
3. The answer is parsed and validated exactly as :func:`~llama_kb.knowledge.loader.load_knowledge`
   would; malformed or invalid output is sent back with the problems, up to ``max_retries``
   more times.
4. Optionally a check-in record (redacted input, structured output, model, time, load
   report) is written under ``<kb>/checkins/``; then the knowledge is loaded.

The LLM may be a LlamaIndex ``LLM`` (``complete``), a LangChain chat model or LLM
(``invoke``), or a callable ``prompt -> str``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import logging
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from llama_kb.errors import ConfigurationError, DocumentError, MissingDependencyError
from llama_kb.knowledge import guards
from llama_kb.knowledge.loader import LoadReport, apply_plan, parse_json
from llama_kb.knowledge.model import KnowledgeType
from llama_kb.knowledge.store import HasKnowledge, KnowledgeStore, knowledge_store
from llama_kb.knowledge.validation import MAX_PIECE_CHARS, KnowledgePlan, validate_knowledge

logger = logging.getLogger(__name__)

LLM_ENV = "LLAMA_KB_LLM"
CHECKIN_DIR = "checkins"
DEFAULT_MAX_RETRIES = 2

STRUCTURING_PROMPT = """\
You turn an expert's notes into structured knowledge for an AI assistant.

Extract the entities, facts, procedures, preferences and relationships in the text below and
answer with ONE JSON object, nothing else (no markdown, no comments), of this form:

{
  "metadata": {
    "<entity_id>": {"entity_type": "<type>", "properties": {"<key>": "<value>"}}
  },
  "pieces": [
    {
      "piece_id": "<short-kebab-case-id>",
      "content": "<one self-contained statement, in the expert's words>",
      "knowledge_type": "<one of: __KNOWLEDGE_TYPES__>",
      "info_type": "<user_profile | instructions | context | skills>",
      "tags": ["<lowercase keyword>"],
      "entity_id": "<entity_id of the person or thing it belongs to, or null>",
      "embedding_text": "<keywords and synonyms that help find this piece>"
    }
  ],
  "graph": {
    "nodes": [{"node_id": "<type>:<name>", "node_type": "<type>", "label": "<Name>"}],
    "edges": [
      {"source_id": "<node_id>", "target_id": "<node_id>", "edge_type": "<UPPER_SNAKE_CASE>",
       "properties": {"piece_id": "<id of the piece that states this relation, if any>"}}
    ]
  }
}

Rules:
- Entity and node ids look like "user:alice", "technique:les", "case:jn-042".
- knowledge_type: fact = a factual statement, instruction = a rule to obey, preference = an
  opinion, procedure = steps to follow, note = an observation, episodic = a past event.
- info_type: user_profile = about the person, instructions = what the assistant must do,
  context = background to reason over, skills = techniques the assistant can apply.
- Every edge connects two nodes listed in graph.nodes; piece ids are unique.
- Never include credentials or secrets: no passwords, API keys, tokens, private keys or
  connection strings with credentials, even if the text contains them.
__ENTITY_HINT__
Text:
<<<
__TEXT__
>>>
"""

_RETRY_PROMPT = """\

Your previous answer was rejected:
__PROBLEMS__
Answer again with the corrected JSON object only.
"""


@dataclass(frozen=True)
class StructuringResult:
    """What :func:`structure_knowledge` produced.

    Attributes:
        data: The validated knowledge document.
        attempts: LLM calls made.
        model: Name of the model that answered.
        report: The load report (``None`` when not loaded).
        checkin_path: The check-in record written, if any.
    """

    data: dict[str, Any]
    attempts: int
    model: str
    report: LoadReport | None = None
    checkin_path: Path | None = None


def build_prompt(text: str, entity_id: str | None = None) -> str:
    """The structuring prompt for ``text`` (already redacted)."""
    hint = (
        f"- The author is {entity_id!r}: use it as entity_id for their own knowledge.\n"
        if entity_id
        else ""
    )
    return (
        STRUCTURING_PROMPT.replace("__KNOWLEDGE_TYPES__", ", ".join(t.value for t in KnowledgeType))
        .replace("__ENTITY_HINT__", hint)
        .replace("__TEXT__", text)
    )


def structure_knowledge(
    kb: KnowledgeStore | HasKnowledge,
    text: str,
    llm: Any,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    entity_id: str | None = None,
    checkin: bool = False,
    load: bool = True,
    source: str = "<text>",
    max_piece_chars: int = MAX_PIECE_CHARS,
) -> StructuringResult:
    """Structure free text with ``llm``, validate it, optionally record it, and load it.

    Args:
        kb: An open knowledge base (or its :class:`KnowledgeStore`).
        text: The expert's notes.
        llm: A LlamaIndex ``LLM``, a LangChain chat model / LLM, or ``prompt -> str``.
        max_retries: Further attempts after a malformed or invalid answer.
        entity_id: The author (``user:alice``), suggested to the LLM as owner of the pieces.
        checkin: Write a check-in record under ``<kb>/checkins/``.
        load: Load the result into ``kb`` (``False``: only return it).
        source: Name of the input for messages (a path or ``<stdin>``).
        max_piece_chars: Longest accepted piece ``content``.

    Returns:
        The validated document, the number of attempts, the model name, the load report and
        the check-in path.

    Raises:
        DocumentError: The text is empty, or no valid answer came within the attempts.
        ConfigurationError: ``llm`` is not a supported model, or ``max_retries`` < 0.
    """
    if max_retries < 0:
        raise ConfigurationError(f"max_retries must be >= 0, got {max_retries}")
    if not text.strip():
        raise DocumentError(source, "the text to structure is empty")
    safe_text = guards.redact(text)
    if safe_text != text:
        logger.warning("%s: credentials were redacted before sending the text to the LLM", source)
    prompt = build_prompt(safe_text.strip(), entity_id)
    model = model_name(llm)
    store = knowledge_store(kb)
    data, plan, attempts = _ask(llm, prompt, source, store, max_retries, max_piece_chars)
    report = apply_plan(plan, store) if load else None
    path = _write_checkin(store.root, safe_text, data, model, attempts, report) if checkin else None
    return StructuringResult(data, attempts, model, report, path)


def _ask(
    llm: Any,
    prompt: str,
    source: str,
    store: KnowledgeStore,
    max_retries: int,
    max_piece_chars: int,
) -> tuple[dict[str, Any], KnowledgePlan, int]:
    problems: list[str] = []
    for attempt in range(1, max_retries + 2):
        request = prompt
        if problems:
            request += _RETRY_PROMPT.replace("__PROBLEMS__", "\n".join(f"- {p}" for p in problems))
        answer = complete(llm, request)
        try:
            data = parse_json(json_text(answer), f"LLM answer {attempt}")
            plan = validate_knowledge(data, source, store, max_piece_chars)
        except DocumentError as e:
            problems = [e.reason]
        else:
            problems = [f"{s.item}: {s.reason}" for s in plan.skipped]
            if not problems:
                logger.info("%s: structured by the LLM in %d attempt(s)", source, attempt)
                return dict(data), plan, attempt
        logger.warning("%s: LLM answer %d rejected (%s)", source, attempt, "; ".join(problems))
    raise DocumentError(
        source,
        f"the LLM gave no valid knowledge in {max_retries + 1} attempt(s); last problems: "
        + "; ".join(problems),
    )


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def json_text(answer: str) -> str:
    """The JSON object in an answer, without markdown fences or surrounding prose."""
    fenced = _FENCE.search(answer)
    if fenced:
        answer = fenced.group(1)
    start, end = answer.find("{"), answer.rfind("}")
    return answer[start : end + 1] if 0 <= start < end else answer


def _write_checkin(
    root: Path,
    text: str,
    data: dict[str, Any],
    model: str,
    attempts: int,
    report: LoadReport | None,
) -> Path:
    now = datetime.now(UTC)
    digest = hashlib.sha256(text.encode()).hexdigest()
    folder = root / CHECKIN_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{now.strftime('%Y%m%dT%H%M%S%fZ')}-{digest[:12]}.json"
    record = {
        "created_at": now.isoformat().replace("+00:00", "Z"),
        "model": model,
        "attempts": attempts,
        "input_sha256": digest,
        "input": text,
        "structured": data,
        "report": report.to_dict() if report else None,
    }
    path.write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    logger.info("wrote check-in record %s", path)
    return path


# -- LLMs ---------------------------------------------------------------------------------------


def complete(llm: Any, prompt: str) -> str:
    """The text ``llm`` answers to ``prompt``.

    Raises:
        ConfigurationError: ``llm`` is not a LlamaIndex LLM, a LangChain model or a callable.
    """
    from llama_index.core.llms import LLM

    if isinstance(llm, LLM):
        return str(llm.complete(prompt).text)
    if hasattr(llm, "invoke"):
        answer = llm.invoke(prompt)
        return _content_text(getattr(answer, "content", answer))
    if callable(llm):
        return str(llm(prompt))
    raise ConfigurationError(
        f"unsupported LLM of type {type(llm).__name__}: pass a LlamaIndex LLM, a LangChain "
        "chat model or a callable prompt -> str"
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return str(content)
    parts = []
    for block in content:  # LangChain content blocks
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "".join(parts)


def model_name(llm: Any) -> str:
    """A name for ``llm`` (its model name when it reports one)."""
    metadata = getattr(llm, "metadata", None)
    name = getattr(metadata, "model_name", None)
    if isinstance(name, str) and name:
        return name
    for attr in ("model_name", "model", "model_id"):
        value = getattr(llm, attr, None)
        if isinstance(value, str) and value:
            return value
    return type(llm).__name__


def resolve_llm(spec: str | None = None) -> Any:
    """The LLM named by ``spec``, or by the ``LLAMA_KB_LLM`` environment variable.

    Args:
        spec: ``openai:<model>`` (needs ``llama-kb[openai]`` and ``OPENAI_API_KEY``), or
            ``package.module:attribute`` naming an LLM object, a ``prompt -> str`` function,
            or a factory (a class or a function without arguments) returning one.

    Raises:
        ConfigurationError: Nothing is configured, or the spec cannot be resolved.
    """
    spec = spec or os.environ.get(LLM_ENV)
    if not spec:
        raise ConfigurationError(
            f"no LLM configured: pass --llm openai:<model> (or package.module:factory) or set "
            f"{LLM_ENV}; structuring free text needs an LLM"
        )
    prefix, _, rest = spec.partition(":")
    if not rest:
        raise ConfigurationError(
            f"LLM spec {spec!r} must look like openai:<model> or package.module:attribute"
        )
    if prefix == "openai":
        try:
            from llama_index.llms.openai import OpenAI
        except ImportError as e:
            raise MissingDependencyError(
                "llama-index-llms-openai", "openai", "Structuring with OpenAI"
            ) from e
        return OpenAI(model=rest)
    try:
        target = getattr(importlib.import_module(prefix), rest)
    except (ImportError, AttributeError) as e:
        raise ConfigurationError(f"cannot import the LLM {spec!r}: {e}") from e
    return target() if _is_factory(target) else target


def _is_factory(target: Any) -> bool:
    """A class, or a function callable without arguments (not a ``prompt -> str`` callable)."""
    if inspect.isclass(target):
        return True
    if not inspect.isfunction(target):
        return False
    return not any(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in inspect.signature(target).parameters.values()
    )
