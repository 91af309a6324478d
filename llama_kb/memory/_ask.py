"""Ask an LLM for one JSON object, validate it, and send problems back (bounded retries)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import ValidationError

from llama_kb.errors import DocumentError
from llama_kb.knowledge.loader import parse_json
from llama_kb.knowledge.structuring import complete, json_text

logger = logging.getLogger(__name__)

T = TypeVar("T")

_RETRY = """

Your previous answer was rejected:
{problems}
Answer again with the corrected JSON object only.
"""


def ask_json(
    llm: Any,
    prompt: str,
    validate: Callable[[Any], T],
    source: str,
    max_retries: int,
) -> tuple[T, int]:
    """The validated answer of ``llm`` to ``prompt`` and the number of calls made.

    Args:
        llm: A LlamaIndex LLM, a LangChain model or a ``prompt -> str`` callable.
        prompt: The request.
        validate: Turns the parsed JSON into the result; raises ``ValueError`` (pydantic's
            ``ValidationError`` included) or :class:`DocumentError` with the problems.
        source: What is asked for, in messages (``extraction``, ``decision for item 2``).
        max_retries: Further attempts after a malformed or invalid answer.

    Raises:
        DocumentError: No valid answer within ``max_retries + 1`` attempts.
    """
    problems = ""
    for attempt in range(1, max_retries + 2):
        request = prompt + (_RETRY.format(problems=problems) if problems else "")
        answer = complete(llm, request)
        try:
            return validate(parse_json(json_text(answer), f"LLM answer {attempt}")), attempt
        except ValidationError as e:
            problems = "\n".join(
                f"- {'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors()
            )
        except DocumentError as e:
            problems = f"- {e.reason}"
        except ValueError as e:
            problems = f"- {e}"
        logger.warning("%s: LLM answer %d rejected:\n%s", source, attempt, problems)
    raise DocumentError(
        source,
        f"the LLM gave no valid answer in {max_retries + 1} attempt(s); last problems:\n"
        + problems,
    )
