"""A record as the search engine indexes it (`SearchDocument`), made once per admitted record."""

from __future__ import annotations

import operator

from papercode.core.days import year_of
from papercode.core.ids import paper_key
from papercode.index.search_documents import INDEXED_LIST_SEPARATOR, SearchDocument

from .admission import Admitted
from .decode import LoadedRecord

_METHOD_NAME = operator.attrgetter("method_name")
_FRAMEWORK = operator.attrgetter("framework")
_STATUS = operator.attrgetter("status")
_IS_OFFICIAL = operator.attrgetter("is_official")


def search_document(item: LoadedRecord, admitted: Admitted) -> SearchDocument:
    """What the search engine indexes for a record (its lists made with C-level loops: this runs per record)."""
    record = item.record
    harvest = record.syntology
    samples = harvest.samples if harvest is not None else None
    links = record.code_links
    tasks, methods, date = record.tasks, record.methods, record.date
    return SearchDocument(
        paper=admitted.ordinal,
        replacing=admitted.replacing,
        key=paper_key(item.arxiv_id, admitted.slug),
        title=record.title,
        abstract=record.abstract or "",
        authors=INDEXED_LIST_SEPARATOR.join(record.authors or ()),
        tasks=[(task.task_slug, task.task_name or task.task_slug) for task in tasks] if tasks else [],
        methods=list(map(_METHOD_NAME, methods)) if methods else [],
        frameworks=sorted(set(filter(None, map(_FRAMEWORK, links)))) if links else [],
        statuses=sorted(set(map(_STATUS, samples))) if samples else [],
        date=date,
        year=year_of(date),
        samples=len(samples) if samples else 0,
        official=any(map(_IS_OFFICIAL, links)) if links else False,
    )
