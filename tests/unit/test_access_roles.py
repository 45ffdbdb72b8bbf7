"""Identities as grants (app/access/roles.py): a token holds one grant; a person in several groups holds one
per group, and may do in a project only what a grant covering that project allows."""

from __future__ import annotations

from dsh_inspect.access import OPEN, Grant, Identity

ALPHA = {"cwd": "/work/alpha"}
BETA = {"cwd": "/work/beta/"}  # a trailing slash is the same project
NOWHERE = {"id": "no-cwd"}


def test_a_token_holds_its_role_over_its_projects() -> None:
    viewer = Identity.of("token:v", "viewer", frozenset({"/work/alpha"}))
    assert viewer.can("read") and viewer.can("download") and not viewer.can("upload")
    assert viewer.scoped and viewer.sees_header(ALPHA) and not viewer.sees_header(BETA)
    assert not viewer.sees_header(NOWHERE), "a session without a project only for an unscoped identity"
    assert Identity.of("token:all", "viewer").sees_header(NOWHERE)
    assert Identity.of("token:m", "metrics").can("list") and not Identity.of("token:m", "metrics").can("read")


def test_several_grants_allow_per_project_what_each_allows_there() -> None:
    person = Identity(
        "user:alice", (Grant("member", frozenset({"/work/alpha"})), Grant("viewer", frozenset({"/work/beta"})))
    )
    assert person.role == "member" and person.projects == {"/work/alpha", "/work/beta"}
    assert person.may("upload", ALPHA) and not person.may("upload", BETA) and person.may("read", BETA)
    uploading = person.narrowed("upload")  # what an upload route sees: the member grant only
    assert uploading.sees_header(ALPHA) and not uploading.sees_header(BETA)
    reading = person.narrowed("read")
    assert reading.sees_header(ALPHA) and reading.sees_header(BETA)
    watcher = Identity("user:bob", (Grant("metrics"), Grant("viewer", frozenset({"/work/beta"}))))
    assert not watcher.scoped and watcher.sees_header(ALPHA)  # listed everywhere (metrics)…
    assert watcher.may("read", BETA) and not watcher.may("read", ALPHA)  # …read only where a viewer
    assert watcher.narrowed("read").sees_header(BETA) and not watcher.narrowed("read").sees_header(ALPHA)


def test_administration_needs_an_admin_of_every_project() -> None:
    assert Identity.of("token:root", "admin").can("admin")
    scoped_admin = Identity.of("token:lead", "admin", frozenset({"/work/alpha"}))
    assert not scoped_admin.can("admin"), "a token it makes could reach any project"
    assert scoped_admin.can("delete") and scoped_admin.may_delete("token:other", (ALPHA,))
    assert not scoped_admin.may_delete("token:other", (ALPHA, BETA))


def test_a_member_deletes_what_it_uploaded_in_its_projects() -> None:
    member = Identity.of("token:ci", "member", frozenset({"/work/alpha"}))
    assert member.may_delete("token:ci", (ALPHA,)) and not member.may_delete("token:other", (ALPHA,))
    assert not member.may_delete(None, (ALPHA,)), "an upload from before access control: an admin's to delete"
    assert not Identity.of("token:v", "viewer").may_delete("token:v", (ALPHA,))
    assert OPEN.may_delete(None, (ALPHA, BETA)) and OPEN.can("admin") and OPEN.sees_header(NOWHERE)
