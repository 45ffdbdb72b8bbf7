"""The form a context source declares: `contextForm` (docs/ui.md §1.3).

Only a request: whether that form actually renders is decided by the body
readers (`app.forms.bodies`), which check the facts it needs.
"""

from __future__ import annotations

from typing import Any, Literal

from ..model.values import CONTEXT_FORMS, ContextForm, MessageSource
from .readers import source_record

Form = ContextForm
# The forms a context row can render in: a declared one whose readers all succeed, else the
# documented default, `opaque` (docs/product.md "Producer-declared context forms").
RenderedForm = Literal[ContextForm, "opaque"]
RENDERED_FORMS: tuple[RenderedForm, ...] = (*CONTEXT_FORMS, "opaque")


def context_form(source: MessageSource | Any) -> Form | None:
    """A known `source.form`; None for no form, a later form, or a non-object source."""
    record = source_record(source)
    form = record.get("form") if record is not None else None
    # `in` on the tuple compares by equality, so only strings can match.
    return form if isinstance(form, str) and form in CONTEXT_FORMS else None
