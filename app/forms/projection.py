"""Everything a context row shows, in one value: header and body (docs/ui.md §1-§3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..model.values import Message, MessageSource
from .bodies import ContextBody, context_body
from .content import Content
from .declared_form import Form, RenderedForm, context_form
from .provenance import Role, context_provenance

_FROM_MESSAGE: Any = object()


@dataclass(frozen=True, slots=True)
class ContextView:
    role: Role
    # `message.contextInjection` or `message.contextRecall`.
    title_key: str
    # None: the header shows the title alone, with no separator and no summary.
    label: str | None
    # What the source asked for; only `rendered_form` says what it got.
    declared_form: Form | None
    # The `data-context-form` marker; None for the opaque body (no marker).
    rendered_form: Form | None
    # The rendered notice's one-liner, whether or not the header can show it.
    summary: str | None
    body: ContextBody

    @property
    def form(self) -> RenderedForm:
        """The form that rendered: `rendered_form`, or the default, `opaque`."""
        return self.rendered_form or "opaque"

    @property
    def header_summary(self) -> str | None:
        """The summary the header shows: never without a label (docs/ui.md §2.1)."""
        return self.summary if self.label is not None else None


def project_context(
    content: Content,
    source: MessageSource | Any = _FROM_MESSAGE,
) -> ContextView:
    """Project a context message, or its content and source as logged.

    `source` defaults to the message's own; with bare content it is required,
    since `None` is itself a loggable (unreadable) source.
    """
    if source is _FROM_MESSAGE:
        if not isinstance(content, Message):
            raise TypeError("project_context needs a source unless given a Message")
        source = content.source
    provenance = context_provenance(source)
    declared = context_form(source)
    rendered = context_body(declared, content, source)
    return ContextView(
        role=provenance.role,
        title_key=provenance.title_key,
        label=provenance.label,
        declared_form=declared,
        rendered_form=rendered.rendered,
        summary=rendered.summary,
        body=rendered.body,
    )
