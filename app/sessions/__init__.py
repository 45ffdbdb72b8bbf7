"""The sessions a server or a command knows: found under paths and in the upload store, keyed for URLs
(`registry`, `keys`), read and kept per file version (`caches`, `transcript`), and searched (in one session:
`session_search`; across sessions: `search_index` on SQLite, `team_search_index` in the team's PostgreSQL).

Layering: imports `log`, `model`, `history`, `forms` and `store`; never a web framework, so the command
line's `search` uses it without the web layer (an import contract in pyproject.toml says so).

The public API below is what the layers above use; the modules hold the rest (`session_search.search_index`
is not named here: the package's `search_index` is the cross-session index's module)."""

from .archive import MAX_IMAGE_BYTES, InlineImages, inline_images, media_of, media_type, read_member
from .caches import CACHE_MB, Latest
from .generation_keys import on_disk
from .hits import SearchHitJson, hit_json
from .keys import session_url
from .registry import (
    Entry,
    FileVersion,
    Mark,
    Registry,
    SessionGone,
    UploadedAs,
    appended,
    file_version,
    fingerprint,
    mark_at,
    url_safe_id,
)
from .search_index import (
    HITS,
    INDEX_FILE,
    CorpusIndex,
    FanOut,
    Found,
    Query,
    Reader,
    bring_up_to_date,
    identity,
    read_afresh,
    read_mark,
    visible,
)
from .session_search import SearchIndex, row_searchable, search
from .team_search_index import PgCorpusIndex, upload_identity
from .transcript import END, Paging, Transcript, build_transcript
from .wire import Twin

__all__ = [
    "CACHE_MB",
    "END",
    "HITS",
    "INDEX_FILE",
    "MAX_IMAGE_BYTES",
    "CorpusIndex",
    "Entry",
    "FanOut",
    "FileVersion",
    "Found",
    "InlineImages",
    "Latest",
    "Mark",
    "Paging",
    "PgCorpusIndex",
    "Query",
    "Reader",
    "Registry",
    "SearchHitJson",
    "SearchIndex",
    "SessionGone",
    "Transcript",
    "Twin",
    "UploadedAs",
    "appended",
    "bring_up_to_date",
    "build_transcript",
    "file_version",
    "fingerprint",
    "hit_json",
    "identity",
    "inline_images",
    "mark_at",
    "media_of",
    "media_type",
    "on_disk",
    "read_afresh",
    "read_mark",
    "read_member",
    "row_searchable",
    "search",
    "session_url",
    "upload_identity",
    "url_safe_id",
    "visible",
]
