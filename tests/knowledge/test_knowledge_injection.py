"""Knowledge in prompts: the LangChain runnable and LlamaIndex function mappings."""

from __future__ import annotations

import pytest
from knowledge_helpers import SEED_EXAMPLE, SEED_QUERY, SEED_SECTIONS
from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough
from llama_index.core import PromptTemplate

from langchain_kb.sections import KnowledgeSections
from llama_kb import ConfigurationError, KnowledgeBase, QueryError
from llama_kb.knowledge import (
    ConflictStrategy,
    KnowledgeProvider,
    knowledge_function_mappings,
    load_knowledge,
    merge_knowledge,
)

SYSTEM = "Profile:\n{user_profile}\n\nRules:\n{instructions}\n\nBackground:\n{context}"


@pytest.fixture
def provider(kb: KnowledgeBase) -> KnowledgeProvider:
    assert load_knowledge(kb, SEED_EXAMPLE).ok
    return KnowledgeProvider(kb, entity_id="user:alice")


def test_langchain_chain_fills_the_prompt(provider: KnowledgeProvider) -> None:
    sections = KnowledgeSections(provider, defaults=["user_profile", "instructions", "context"])
    prompt = ChatPromptTemplate.from_messages([("system", SYSTEM), ("human", "{question}")])
    chain = {"question": RunnablePassthrough()} | sections | prompt | ParrotFakeChatModel()
    # the parrot model answers with the last message; check the whole prompt instead
    messages = (sections | prompt).invoke({"question": SEED_QUERY}).to_messages()
    assert messages[0].content == (
        f"Profile:\n{SEED_SECTIONS['user_profile']}\n\n"
        f"Rules:\n{SEED_SECTIONS['instructions']}\n\n"
        "Background:\n"
    )
    assert messages[1].content == SEED_QUERY
    assert chain.invoke(SEED_QUERY).content == SEED_QUERY


async def test_langchain_async_and_batch(provider: KnowledgeProvider) -> None:
    sections = KnowledgeSections(provider)
    merged = await sections.ainvoke({"question": SEED_QUERY})
    assert merged == {"question": SEED_QUERY, **SEED_SECTIONS}
    assert sections.batch([{"question": SEED_QUERY}] * 2) == [merged, merged]


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("feed_only", SEED_SECTIONS["user_profile"]),
        (ConflictStrategy.ATTRIBUTE_ONLY, "role: reviewer"),
        ("MERGE", f"role: reviewer\n{SEED_SECTIONS['user_profile']}"),
    ],
)
def test_conflict_strategies(provider: KnowledgeProvider, strategy, expected: str) -> None:
    sections = KnowledgeSections(provider, strategy=strategy)
    merged = sections.invoke({"question": SEED_QUERY, "user_profile": "role: reviewer"})
    assert merged["user_profile"] == expected
    assert merged["instructions"] == SEED_SECTIONS["instructions"]


def test_static_knowledge_and_custom_query_key() -> None:
    sections = KnowledgeSections({"context": "static"}, query_key="input", defaults=["skills"])
    assert sections.invoke({"input": "x"}) == {"input": "x", "context": "static", "skills": ""}
    with pytest.raises(QueryError, match="no 'input' key"):
        sections.invoke({"question": "x"})
    with pytest.raises(ConfigurationError, match="unknown conflict strategy"):
        KnowledgeSections({}, strategy="newest")
    with pytest.raises(ConfigurationError, match="dict of str to str"):
        KnowledgeSections(lambda q: {"context": 1}).invoke({"question": "x"})


def test_merge_knowledge_keeps_empty_inputs_out_of_merges() -> None:
    feed = {"context": "", "question": "q"}
    merged = merge_knowledge(feed, {"context": "k"}, "merge")
    assert merged == {"context": "k", "question": "q"} and feed["context"] == ""


def test_llama_index_prompt_template(provider: KnowledgeProvider) -> None:
    calls: list[str] = []

    def counting(query: str) -> dict[str, str]:
        calls.append(query)
        return provider(query)

    template = PromptTemplate(
        SYSTEM + "\n\nQuestion: {query_str}",
        function_mappings=knowledge_function_mappings(
            counting, ["user_profile", "instructions", "context"]
        ),
    )
    text = template.format(query_str=SEED_QUERY)
    assert text == (
        f"Profile:\n{SEED_SECTIONS['user_profile']}\n\n"
        f"Rules:\n{SEED_SECTIONS['instructions']}\n\n"
        f"Background:\n\n\nQuestion: {SEED_QUERY}"
    )
    assert calls == [SEED_QUERY]  # one retrieval for three sections

    kept = PromptTemplate(
        "{user_profile}|{query_str}",
        function_mappings=knowledge_function_mappings(
            provider, ["user_profile"], strategy="attribute_only"
        ),
    )
    assert kept.format(query_str=SEED_QUERY, user_profile="mine") == f"mine|{SEED_QUERY}"
