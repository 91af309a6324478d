"""One query's repeated store reads are served once, and only within that query."""

from __future__ import annotations

import asyncio

from llama_kb.stores.query_scope import once, one_query


def _counter() -> tuple[list[int], object]:
    reads: list[int] = []

    def read() -> int:
        reads.append(1)
        return len(reads)

    return reads, read


def test_outside_a_query_every_read_goes_to_the_store() -> None:
    reads, read = _counter()
    assert [once("k", read), once("k", read)] == [1, 2]
    assert len(reads) == 2


def test_within_a_query_a_key_is_read_once_and_the_next_query_reads_again() -> None:
    reads, read = _counter()
    with one_query():
        assert [once("k", read), once("k", read)] == [1, 1]
        assert once("other", read) == 2
    with one_query():
        assert once("k", read) == 3
    assert len(reads) == 3


def test_threads_started_from_the_query_share_its_reads() -> None:
    reads, read = _counter()

    async def query() -> list[int]:
        with one_query():
            first = once("k", read)
            return [
                first,
                *await asyncio.gather(*(asyncio.to_thread(once, "k", read) for _ in range(3))),
            ]

    assert asyncio.run(query()) == [1, 1, 1, 1]
    assert len(reads) == 1
