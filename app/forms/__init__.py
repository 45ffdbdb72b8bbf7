"""Context-row projection (docs/ui.md §1-§3): pure data for the templates, no HTML.

Layering: imports `app.model` and `app.log.jsonvalues` only.
"""

from .bodies import (
    CATALOG_SHOWN,
    CatalogBody,
    CatalogEntry,
    ContextBody,
    InstructionFile,
    InstructionsBody,
    NoticeBody,
    OpaqueBody,
    RecallBody,
    RecallReference,
    RelayBody,
    RenderedBody,
    SnapshotBody,
    SnapshotSection,
    SourceField,
    context_body,
    opaque_body,
)
from .content import Bounded, Content, ContentPart, JsonPart, TextPart, bound, content_parts, unknown_parts
from .declared_form import RENDERED_FORMS, Form, RenderedForm, context_form
from .jsformat import (
    TEXT_LIMIT,
    cap_utf16,
    compact_json,
    field_text,
    interpolate,
    js_entries,
    pretty_json,
    utf16_len,
)
from .projection import ContextView, project_context
from .provenance import Provenance, Role, context_provenance, session_recall_labels

__all__ = [
    "CATALOG_SHOWN",
    "RENDERED_FORMS",
    "TEXT_LIMIT",
    "Bounded",
    "CatalogBody",
    "CatalogEntry",
    "Content",
    "ContentPart",
    "ContextBody",
    "ContextView",
    "Form",
    "InstructionFile",
    "InstructionsBody",
    "JsonPart",
    "NoticeBody",
    "OpaqueBody",
    "Provenance",
    "RecallBody",
    "RecallReference",
    "RelayBody",
    "RenderedBody",
    "RenderedForm",
    "Role",
    "SnapshotBody",
    "SnapshotSection",
    "SourceField",
    "TextPart",
    "bound",
    "cap_utf16",
    "compact_json",
    "content_parts",
    "context_body",
    "context_form",
    "context_provenance",
    "field_text",
    "interpolate",
    "js_entries",
    "opaque_body",
    "pretty_json",
    "project_context",
    "session_recall_labels",
    "unknown_parts",
    "utf16_len",
]
