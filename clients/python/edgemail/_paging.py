"""A list call: iterate it for every item across pages, or walk `.pages()` /
take `.first_page()` for one page at a time. Nothing is fetched until one of
them is used."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

PageT = TypeVar("PageT")
ItemT = TypeVar("ItemT")


@dataclass(frozen=True)
class CursorPaging:
    """The answer's `next` object (null at the end) holds the next page's query parameters of the same names."""

    items: str
    cursor_fields: tuple[str, ...]


@dataclass(frozen=True)
class OffsetPaging:
    """`limit`/`offset`: the next page starts past the rows seen; an empty or short page ends the list."""

    items: str


PagingRule = CursorPaging | OffsetPaging


class Paginated(Generic[PageT, ItemT]):
    def __init__(self, fetch_page: Callable[[dict[str, Any]], PageT], query: dict[str, Any], rule: PagingRule) -> None:
        self._fetch_page = fetch_page
        self._query = query
        self._rule = rule

    def first_page(self) -> PageT:
        """The first page only, as the API answered it."""
        return self._fetch_page(dict(self._query))

    def pages(self) -> Iterator[PageT]:
        """Every page in turn, following the cursors until the list ends."""
        query: dict[str, Any] | None = dict(self._query)
        while query is not None:
            page = self._fetch_page(query)
            yield page
            query = self._next_query(query, page)

    def __iter__(self) -> Iterator[ItemT]:
        for page in self.pages():
            yield from self._items_of(page)

    def to_list(self) -> list[ItemT]:
        """Every item of every page, collected (mind the size of what you list)."""
        return list(self)

    def _items_of(self, page: Any) -> list[ItemT]:
        return page.get(self._rule.items) or []

    def _next_query(self, query: dict[str, Any], page: Any) -> dict[str, Any] | None:
        items = self._items_of(page)
        if isinstance(self._rule, CursorPaging):
            cursor: Mapping[str, Any] | None = page.get("next")
            if not cursor or not items:
                return None
            return {**query, **{field: cursor.get(field) for field in self._rule.cursor_fields}}
        limit = page.get("limit", query.get("limit"))
        if not items or (limit is not None and len(items) < int(limit)):
            return None
        return {**query, "offset": int(page.get("offset", query.get("offset")) or 0) + len(items)}
