"""`dsh-inspect render` output and the CLI's settings, without a browser."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import socket
from pathlib import Path

import pytest

from app.cli import main, run_render, run_serve
from app.demo.generate import SESSIONS
from app.web.settings import SETTINGS, Settings
from tests.support.uploads import jsonl_bytes


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_export_allows_exactly_its_own_script_and_style(tmp_path: Path) -> None:
    out = tmp_path / "forms.html"
    assert main(["render", str(SESSIONS), "--session", "demo-context-forms", "-o", str(out)]) == 0
    html = out.read_text()
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert len(scripts) == 1 and len(styles) == 1
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert csp is not None
    policy = csp.group(1).replace("&#39;", "'")
    assert policy.startswith("default-src 'none'; ")
    assert f"script-src '{sha256(scripts[0])}'" in policy and f"style-src '{sha256(styles[0])}'" in policy
    assert not re.search(r'<(script|link|img)[^>]+(src|href)=', html), "nothing may be fetched"
    assert not re.search(r"<[^>]+ hx-get=", html), "no body is fetched"
    assert html.count("<template data-disclosure-body>") >= 6


def test_render_says_which_session_to_choose_and_what_is_not_a_log(tmp_path: Path) -> None:
    err = io.StringIO()
    assert run_render(str(SESSIONS), output=str(tmp_path / "x.html"), session=None, lang="en", err=err) == 2
    assert "holds 8 sessions; choose one with --session (demo-compaction," in err.getvalue()
    junk = tmp_path / "notes.jsonl"
    junk.write_text("not json\n")
    err = io.StringIO()
    assert run_render(str(junk), output=str(tmp_path / "y.html"), session=None, lang="en", err=err) == 2
    assert "notes.jsonl: not a dsh session log: first line is not JSON" in err.getvalue()
    assert "notes.jsonl, line 1, byte 0)" in err.getvalue()
    assert not (tmp_path / "x.html").exists() and not (tmp_path / "y.html").exists()


def test_render_speaks_chinese_when_asked(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_bytes(jsonl_bytes("zh-export"))
    out = tmp_path / "zh.html"
    assert main(["render", str(log), "-o", str(out), "--lang", "zh"]) == 0
    assert '<html lang="zh-CN">' in out.read_text()


def test_settings_are_named_checked_and_explain_how_to_raise_them() -> None:
    settings = Settings().with_setting("max_upload_mb", "512").with_setting("max_sessions_per_upload", "7")
    assert settings.limits().max_upload_bytes == 512 << 20 and settings.limits().max_sessions_per_upload == 7
    assert settings.raise_hint("max_upload_bytes") == (
        "max_upload_mb", "max_upload_mb is 512; raise it with: dsh-inspect serve --setting max_upload_mb 2048")
    with pytest.raises(ValueError, match="unknown setting 'max_rows'; known: max_upload_mb"):
        Settings().with_setting("max_rows", "1")
    with pytest.raises(ValueError, match="needs a whole number"):
        Settings().with_setting("max_upload_mb", "lots")
    with pytest.raises(ValueError, match="at least 1"):
        Settings().with_setting("max_decompressed_mb", "0")
    assert {d.name for d in SETTINGS} == {"max_upload_mb", "max_decompressed_mb", "max_sessions_per_upload",
                                          "window_rows", "first_screen_events"}
    assert Settings().with_setting("window_rows", "30").window_rows == 30


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Settings", 1)[1]
    for doc in SETTINGS:
        assert f"`{doc.name}`" in section, doc.name


def test_serve_refuses_a_bad_setting_before_it_binds(tmp_path: Path) -> None:
    err = io.StringIO()
    code = run_serve([], host="127.0.0.1", port=1, data_dir=str(tmp_path), settings=[("max_upload_mb", "-3")], err=err)
    assert code == 2 and "max_upload_mb must be at least 1" in err.getvalue()


def test_every_interface_still_refuses_a_foreign_host_name() -> None:
    """Bound to 0.0.0.0 the server answers this machine's names and addresses, not a name that
    a rebinding DNS pointed at it; `--allow-host` adds one."""
    anywhere = Settings(host="0.0.0.0", port=8000)
    assert anywhere.host_allowed(f"{socket.gethostname()}:8000")
    assert anywhere.host_allowed("127.0.0.1:8000")
    assert not anywhere.host_allowed("evil.example:8000")
    assert Settings(host="0.0.0.0", allowed_hosts=("inspector.lan",)).host_allowed("inspector.lan:8000")
    assert Settings(host="::1", port=9000).host_allowed("[::1]:9000")


def test_serve_takes_allow_host(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, object] = {}
    monkeypatch.setattr("app.cli.run_serve", lambda paths, **kw: seen.update(kw) or 0)
    assert main(["serve", "--allow-host", "inspector.lan", "--allow-host", "box"]) == 0
    assert seen["allow_hosts"] == ["inspector.lan", "box"]
