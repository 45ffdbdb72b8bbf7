"""Keys that never break: what each source is listed under as sources come and go."""

from __future__ import annotations

from dsh_inspect.sessions.keys import Claim, Held, Keys, assign


def claim(source: str, sid: str | None = "s1") -> Claim:
    return Claim(source, sid, sid, f"{sid or 'session'}~{source}")


def held(keys: Keys, claims: list[Claim]) -> dict[str, Held]:
    ids = {c.source: c.session_id for c in claims}
    return {source: Held(key, ids[source]) for source, key in keys.primary.items()}


def resolve(keys: Keys, key: str) -> str | None:
    by_key = {k: s for s, k in keys.primary.items()} | keys.aliases
    return by_key.get(key)


def test_a_lone_session_is_keyed_by_its_id_and_by_its_unique_key() -> None:
    keys = assign([claim("a")], {})
    assert keys.primary == {"a": "s1"}
    assert resolve(keys, "s1~a") == "a"
    assert keys.ambiguous == {}


def test_a_second_copy_arriving_later_never_renames_the_first() -> None:
    first = [claim("a")]
    before = assign(first, {})
    both = [claim("a"), claim("b")]
    after = assign(both, held(before, first))
    assert after.primary == {"a": "s1", "b": "s1~b"}
    assert resolve(after, "s1") == "a", "the URL that showed the session still shows it"
    assert resolve(after, "s1~a") == "a" and resolve(after, "s1~b") == "b"
    assert after.ambiguous == {}
    again = assign(both, held(after, both))
    assert again == after, "stable from refresh to refresh"


def test_copies_found_together_get_unique_keys_and_the_short_key_a_chooser() -> None:
    keys = assign([claim("a"), claim("b")], {})
    assert keys.primary == {"a": "s1~a", "b": "s1~b"}
    assert keys.ambiguous == {"s1": ("a", "b")}
    assert resolve(keys, "s1") is None


def test_a_source_rewritten_with_another_session_loses_the_old_key() -> None:
    first = [claim("a", "s1")]
    before = assign(first, {})
    after = assign([claim("a", "s2")], held(before, first))
    assert after.primary == {"a": "s2"}
    assert resolve(after, "s1") is None


def test_when_a_copy_goes_the_other_keeps_its_key_and_gains_the_short_one() -> None:
    both = [claim("a"), claim("b")]
    before = assign(both, {})
    after = assign([claim("b")], held(before, both))
    assert after.primary == {"b": "s1~b"}
    assert resolve(after, "s1") == "b"
    assert after.ambiguous == {}


def test_sessions_without_an_id_are_keyed_uniquely() -> None:
    keys = assign([claim("a", None), claim("b", None)], {})
    assert keys.primary == {"a": "session~a", "b": "session~b"}
    assert keys.ambiguous == {}
