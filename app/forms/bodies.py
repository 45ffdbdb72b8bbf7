"""The rendered form and its body data: `contextBody` (docs/ui.md §1.4, §3).

A declared form renders only when every fact it needs is readable; one bad
entry sends the whole message to the opaque body, because a partial list
would silently hide what the producer sent. The opaque body always works and
keeps every source field visible, so a form this version cannot present (or
a producer's mistake) is still inspectable.

Bodies are data for a template: wording is chosen, numbers are printed
JS-style and long texts are already bounded, so a template only lays them out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..log.jsonvalues import is_nonempty_str, is_number, js_string
from ..model.values import MessageSource
from .content import Bounded, Content, ContentPart, JsonPart, bound, content_parts, unknown_parts
from .declared_form import Form
from .jsformat import field_text, js_entries
from .readers import is_array, is_record, nonempty_str, source_record

InstructionWording = Literal["loaded", "added", "updated", "removed"]

CATALOG_SHOWN = 200
_INSTRUCTION_ACTIONS = ("set", "replace", "remove")


@dataclass(frozen=True, slots=True)
class SourceField:
    """One `dt`/`dd` pair of the opaque body's field list."""

    key: str
    value: Bounded


@dataclass(frozen=True, slots=True)
class OpaqueBody:
    content: tuple[ContentPart, ...]
    # Every source field but `kind`, which the header already names; `form`
    # stays so an undeliverable declaration is visible.
    fields: tuple[SourceField, ...]
    kind: Literal["opaque"] = "opaque"


@dataclass(frozen=True, slots=True)
class InstructionFile:
    path: str
    wording: InstructionWording
    # The `li` title; None when the change's digest is not a string.
    digest: str | None


@dataclass(frozen=True, slots=True)
class InstructionsBody:
    files: tuple[InstructionFile, ...]
    content: tuple[ContentPart, ...]
    kind: Literal["instructions"] = "instructions"


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    name: str
    description: str


@dataclass(frozen=True, slots=True)
class CatalogBody:
    # True shows the "Replacement catalog" caption (`update === true`).
    replacement: bool
    # At most CATALOG_SHOWN; duplicate names are kept (rows are keyed by index).
    entries: tuple[CatalogEntry, ...]
    # How many entries were left off: the `… {count} more` caption when > 0.
    more: int
    # The body leads with the entries, then the blocks that are not text ...
    blocks: tuple[JsonPart, ...]
    # ... and keeps the verbatim model-facing text one click away
    # (`details[data-context-model-text]`): nothing the model read is hidden.
    model_text: tuple[ContentPart, ...]
    kind: Literal["catalog"] = "catalog"


@dataclass(frozen=True, slots=True)
class SnapshotSection:
    name: str
    text: Bounded


@dataclass(frozen=True, slots=True)
class SnapshotBody:
    # The sections stand in for the content entirely (its framing sentence
    # becomes the "Supersedes earlier snapshots" caption).
    sections: tuple[SnapshotSection, ...]
    # Blocks that are not text still show (dsh's GUI drops them; we hide nothing),
    # and the verbatim model-facing text sits collapsed below the sections.
    blocks: tuple[JsonPart, ...]
    model_text: tuple[ContentPart, ...]
    kind: Literal["snapshot"] = "snapshot"


@dataclass(frozen=True, slots=True)
class NoticeBody:
    # The summary rides the header (`RenderedBody.summary`), not the body.
    content: tuple[ContentPart, ...]
    kind: Literal["notice"] = "notice"


@dataclass(frozen=True, slots=True)
class RelayBody:
    # Shown raw in `From session {session}`: the client cannot resolve it to a title.
    sender: str
    content: tuple[ContentPart, ...]
    kind: Literal["relay"] = "relay"


@dataclass(frozen=True, slots=True)
class RecallReference:
    label: str
    # Printed as JS String() would, for `{retained} kept · {omitted} omitted`.
    retained: str
    omitted: str
    truncated: bool


@dataclass(frozen=True, slots=True)
class RecallBody:
    references: tuple[RecallReference, ...]
    content: tuple[ContentPart, ...]
    kind: Literal["recall"] = "recall"


ContextBody = OpaqueBody | InstructionsBody | CatalogBody | SnapshotBody | NoticeBody | RelayBody | RecallBody


@dataclass(frozen=True, slots=True)
class RenderedBody:
    # The form that rendered (the `data-context-form` marker); None for opaque.
    rendered: Form | None
    # The collapsed-row one-liner; only a rendered notice has one.
    summary: str | None
    body: ContextBody


def _wording(action: str, baseline: bool) -> InstructionWording:
    if action == "remove":
        return "removed"
    if baseline:
        return "loaded"
    return "added" if action == "set" else "updated"


def _instructions(record: Mapping[str, Any], content: Content) -> InstructionsBody | None:
    changes = record.get("changes")
    if not is_array(changes):
        return None
    baseline = record.get("baseline") is True
    files: dict[str, InstructionFile] = {}
    for change in changes:
        # Validate before skipping a duplicate: a bad repeat still spoils the list.
        if not is_record(change):
            return None
        path, action, digest = nonempty_str(change.get("path")), change.get("action"), change.get("digest")
        if path is None or not isinstance(action, str) or action not in _INSTRUCTION_ACTIONS:
            return None
        if path not in files:
            files[path] = InstructionFile(path, _wording(action, baseline), digest if isinstance(digest, str) else None)
    if not files:
        return None
    return InstructionsBody(tuple(files.values()), content_parts(content))


def _catalog(record: Mapping[str, Any], content: Content) -> CatalogBody | None:
    entries = record.get("entries")
    if not is_array(entries):
        return None
    read: list[CatalogEntry] = []
    for entry in entries:
        if not is_record(entry):
            return None
        name, description = nonempty_str(entry.get("name")), entry.get("description")
        if name is None or not isinstance(description, str):
            return None
        read.append(CatalogEntry(name, description))
    # An empty list is a valid catalog: an empty replacement retires every name.
    return CatalogBody(
        replacement=record.get("update") is True,
        entries=tuple(read[:CATALOG_SHOWN]),
        more=max(0, len(read) - CATALOG_SHOWN),
        blocks=unknown_parts(content),
        model_text=content_parts(content),
    )


def _snapshot(record: Mapping[str, Any], content: Content) -> SnapshotBody | None:
    sections = record.get("sections")
    if not is_array(sections) or not sections:
        return None
    read: list[SnapshotSection] = []
    for section in sections:
        if not is_record(section):
            return None
        name, text = nonempty_str(section.get("name")), section.get("text")
        if name is None or not isinstance(text, str):
            return None
        read.append(SnapshotSection(name, bound(text)))
    return SnapshotBody(tuple(read), unknown_parts(content), content_parts(content))


def _recall(record: Mapping[str, Any], content: Content) -> RecallBody | None:
    references = record.get("references")
    if not is_array(references) or not references:
        return None
    read: list[RecallReference] = []
    for reference in references:
        if not is_record(reference):
            return None
        label = nonempty_str(reference.get("label"))
        retained, omitted = reference.get("retainedMessages"), reference.get("omittedMessages")
        truncated = reference.get("truncated")
        # JS typeof: a boolean is not a number, a number is not a boolean.
        if not (label is not None and is_number(retained) and is_number(omitted) and isinstance(truncated, bool)):
            return None
        read.append(RecallReference(label, js_string(retained), js_string(omitted), truncated))
    return RecallBody(tuple(read), content_parts(content))


def opaque_body(content: Content, source: MessageSource | Any) -> OpaqueBody:
    """The documented default: the content plus every source field but `kind`."""
    record = source_record(source)
    fields = (
        ()
        if record is None
        else tuple(SourceField(key, bound(field_text(value))) for key, value in js_entries(record) if key != "kind")
    )
    return OpaqueBody(content_parts(content), fields)


def _dedicated(form: Form | None, record: Mapping[str, Any], content: Content) -> ContextBody | None:
    if form == "instructions":
        return _instructions(record, content)
    if form == "catalog":
        return _catalog(record, content)
    if form == "snapshot":
        return _snapshot(record, content)
    if form == "notice":
        return NoticeBody(content_parts(content)) if is_nonempty_str(record.get("summary")) else None
    if form == "relay":
        sender = nonempty_str(record.get("senderSessionId"))
        return RelayBody(sender, content_parts(content)) if sender is not None else None
    if form == "recall":
        return _recall(record, content)
    return None


def context_body(form: Form | None, content: Content, source: MessageSource | Any) -> RenderedBody:
    """The body for a declared form, or the opaque body when its facts are unreadable."""
    record = source_record(source)
    body = None if record is None else _dedicated(form, record, content)
    if record is None or body is None:
        return RenderedBody(None, None, opaque_body(content, source))
    return RenderedBody(form, record["summary"] if isinstance(body, NoticeBody) else None, body)
