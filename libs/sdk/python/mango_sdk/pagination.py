"""Auto-pagination over ``{data, next_page}`` lists."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["AsyncPaginator", "Paginator"]

T = TypeVar("T")


class Paginator(Generic[T]):
    """The result of every ``list`` call. Nothing is sent until it is used.

    - ``for item in client.agents.list(limit=50)`` walks every item of every page, following
      ``next_page`` until it is ``None``.
    - ``.iter_pages()`` walks the pages themselves (``{"data": [...], "next_page": ...}``).
    - ``.first_page()`` fetches (once) and returns the first page.
    """

    def __init__(
        self, fetch_page: Callable[[str | None], dict[str, Any]], start_page: str | None = None
    ) -> None:
        self._fetch_page = fetch_page
        self._start_page = start_page
        self._first: dict[str, Any] | None = None

    def first_page(self) -> dict[str, Any]:
        if self._first is None:
            self._first = self._fetch_page(self._start_page)
        return self._first

    def iter_pages(self) -> Iterator[dict[str, Any]]:
        page = self.first_page()
        yield page
        while isinstance(page.get("next_page"), str):
            page = self._fetch_page(page["next_page"])
            yield page

    def __iter__(self) -> Iterator[T]:
        for page in self.iter_pages():
            yield from page["data"]


class AsyncPaginator(Generic[T]):
    """The result of every ``list`` call of the async client: ``async for item in client.agents.list()``
    walks every item of every page; ``.iter_pages()`` the pages; ``await .first_page()`` the first one."""

    def __init__(
        self, fetch_page: Callable[[str | None], Awaitable[dict[str, Any]]], start_page: str | None = None
    ) -> None:
        self._fetch_page = fetch_page
        self._start_page = start_page
        self._first: dict[str, Any] | None = None

    async def first_page(self) -> dict[str, Any]:
        if self._first is None:
            self._first = await self._fetch_page(self._start_page)
        return self._first

    async def iter_pages(self) -> AsyncIterator[dict[str, Any]]:
        page = await self.first_page()
        yield page
        while isinstance(page.get("next_page"), str):
            page = await self._fetch_page(page["next_page"])
            yield page

    async def __aiter__(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page["data"]:
                yield item
