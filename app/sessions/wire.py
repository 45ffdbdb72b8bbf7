"""The base of every JSON twin: camelCase on the wire, as dsh's own JSON is (docs/product.md Interfaces)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class Twin(BaseModel):
    """camelCase on the wire, as dsh's own JSON is."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)
