"""The access file (`serve --access FILE`, app/access/groups.py): groups to a role and projects, a union for a
person in several groups, nothing for one in none, and a clear refusal for a file that cannot be used."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_inspect.access import AccessFileError, Grant, Identity, group_map

FILE = """
default_role = "none"
[groups.team-a]
role = "member"
projects = ["/home/dev/team-a/app/"]
[groups.auditors]
role = "metrics"
projects = ["*"]
[groups.admins]
role = "admin"
projects = ["*"]
"""


def test_groups_map_to_grants_and_several_groups_to_their_union(tmp_path: Path) -> None:
    path = tmp_path / "access.toml"
    path.write_text(FILE)
    groups = group_map(str(path))
    assert groups.grants_for(["team-a"]) == (Grant("member", frozenset({"/home/dev/team-a/app"})),)
    both = Identity("user:dave", groups.grants_for(["team-a", "auditors", "nobody-maps-this"]), signed_in=True)
    assert both.sees_header({"cwd": "/elsewhere"}) and not both.may("read", {"cwd": "/elsewhere"})
    assert both.may("upload", {"cwd": "/home/dev/team-a/app"})
    assert groups.grants_for(["admins"]) == (Grant("admin"),) and Identity("u", (Grant("admin"),)).can("admin")
    nobody = Identity("user:carol", groups.grants_for(["team-c"]), signed_in=True)
    assert nobody.known and not nobody.grants and not nobody.can("list")


def test_a_default_role_is_for_those_whose_groups_map_to_nothing(tmp_path: Path) -> None:
    path = tmp_path / "access.toml"
    path.write_text('default_role = "viewer"\n[groups.team-a]\nrole = "member"\nprojects = ["/a"]\n')
    groups = group_map(str(path))
    assert groups.grants_for(["team-c"]) == (Grant("viewer"),)
    assert groups.grants_for(["team-a"]) == (Grant("member", frozenset({"/a"})),)
    assert group_map(None).grants_for(["team-a"]) == (), "no access file: nobody signed in is granted anything"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("default_role = 'root'", "default_role 'root'"),
        ("[groups.x]\nrole = 'owner'\nprojects = ['*']", "role 'owner'"),
        ("[groups.x]\nrole = 'member'", "projects is a list"),
        ("[groups.x]\nrole = 'member'\nprojects = []", "projects is a list"),
        ("[groups.x]\nrole = 'member'\nprojects = ['*']\nextra = 1", "give role and projects"),
        ("colour = 'blue'", "unknown key(s) colour"),
        ("this is not toml", "not TOML"),
    ],
)
def test_an_access_file_that_cannot_be_used_is_refused_saying_why(tmp_path: Path, text: str, said: str) -> None:
    path = tmp_path / "access.toml"
    path.write_text(text)
    with pytest.raises(AccessFileError, match="access file") as refused:
        group_map(str(path))
    assert said in str(refused.value) and str(path) in str(refused.value)
    with pytest.raises(AccessFileError, match="No such file"):
        group_map(str(tmp_path / "missing.toml"))
