"""`dsh-inspect render` output and the CLI's settings, without a browser."""

from __future__ import annotations

import base64
import hashlib
import io
import socket
import zipfile
from pathlib import Path

import orjson
import pytest
from dsh_inspect.cli import main, run_render
from dsh_inspect.demo.generate import SESSIONS
from dsh_inspect.sessions.registry import Registry
from dsh_inspect.settings import SETTINGS, Settings
from dsh_inspect.web.render import render_path, render_session

from tests.support.builders import LogBuilder, header
from tests.support.media import png_1x1
from tests.support.rows import attributes, attrs, one, parse, select, text, text_of, texts
from tests.support.uploads import jsonl_bytes

DEMO_IDS = [
    "demo-compaction",
    "demo-context-fallbacks",
    "demo-context-forms",
    "demo-corrupt",
    "demo-crash",
    "demo-subagent-child",
    "demo-subagent-parent",
    "demo-tools",
]


def server_only(html: str) -> list[tuple[str, str, str]]:
    """What only a server answers: a root-relative link, a body or window fetched on demand, the live tail."""
    return [
        (tag, name, value)
        for tag, name, value in attributes(html)
        if (name.endswith("href") and value.startswith("/")) or name in ("hx-get", "hx-ext", "sse-connect")
    ]


def server_chrome(html: str) -> list[tuple[str, str, str]]:
    """The page's parts that need the server: search, the live tail, the download, window loaders."""
    return [
        (tag, name, value)
        for tag, name, value in attributes(html)
        if name in ("data-search", "data-follow", "data-live", "data-download") or name.startswith("data-window-")
    ]


def fetched(html: str) -> list[tuple[str, str, str]]:
    """Whatever the page would fetch: a source that is not inline data, a linked stylesheet or icon."""
    return [
        (tag, name, value)
        for tag, name, value in attributes(html)
        if (name == "src" or (name == "href" and tag in ("link", "script", "img"))) and not value.startswith("data:")
    ]


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_export_allows_exactly_its_own_scripts_and_style(tmp_path: Path) -> None:
    out = tmp_path / "forms.html"
    assert main(["render", str(SESSIONS), "--session", "demo-context-forms", "-o", str(out)]) == 0
    html = out.read_text()
    scripts, styles = select(html, "script"), select(html, "style")
    assert len(scripts) == 2 and len(styles) == 1
    # theme.js runs before first paint; the rows' modules, bundled, run deferred as on the served page
    assert [s.attrs for s in scripts] == [{}, {"type": "module"}] and not styles[0].attrs
    (policy,) = attrs(html, 'head > meta[http-equiv="Content-Security-Policy"]', "content")
    assert policy.startswith("default-src 'none'; ")
    theme, module, style = (str(e.string) for e in (*scripts, styles[0]))  # verbatim: the parser unescapes none
    assert f"script-src '{sha256(theme)}' '{sha256(module)}';" in policy and f"style-src '{sha256(style)}'" in policy
    assert fetched(html) == [], "nothing may be fetched"
    assert not [name for _, name, _ in attributes(html) if name == "hx-get"], "no body is fetched"
    assert len(parse(html).find_all("template", attrs={"data-disclosure-body": True})) >= 6


@pytest.mark.parametrize("session_id", DEMO_IDS)
def test_the_export_has_nothing_only_a_server_answers(tmp_path: Path, session_id: str) -> None:
    out = tmp_path / "page.html"
    assert main(["render", str(SESSIONS), "--session", session_id, "-o", str(out)]) == 0
    html = out.read_text()
    assert server_only(html) == []
    assert server_chrome(html) == []
    assert "#1" in texts(html, "span.meta-link")  # the event number stays, as text


def test_an_exported_subagent_names_its_relatives_without_linking_them(tmp_path: Path) -> None:
    html = render_path(str(SESSIONS), session="demo-subagent-parent")
    related = one(html, "p.related[data-related]")
    assert not select(related, "a")
    children = texts(related, "code[data-child-link]")
    assert children and all(children)


def write_log(path: Path, session_id: str, b: LogBuilder) -> Path:
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header(session_id), *b.events]))
    return path


def test_a_tool_output_past_the_pages_cap_is_in_the_file_whole(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    result = next(e for e in b.events if e["type"] == "tool/result")
    result["data"]["message"]["content"][0]["content"] = [
        {"type": "text", "text": "".join(f"line {i:05d}\n" for i in range(3000))}
    ]
    html = render_path(str(write_log(tmp_path / "big.jsonl", "big", b)))
    (output,) = select(html, "pre[data-tool-output]")
    assert output.find_parent("template", attrs={"data-disclosure-body": True}) is not None
    assert text_of(output) == "".join(f"line {i:05d}\n" for i in range(3000))
    assert not [name for _, name, _ in attributes(html) if name in ("data-truncated", "data-show-all")]


def test_a_models_root_relative_link_is_text_and_a_web_link_stays(tmp_path: Path) -> None:
    b = LogBuilder()
    b.turn(1)
    answer = [e for e in b.events if e["type"] == "assistant/message"][-1]
    answer["data"]["message"]["content"][0]["text"] = "[the spec](/docs/spec.md) and [the site](https://example.com/)"
    html = render_path(str(write_log(tmp_path / "links.jsonl", "links", b)))
    markdown = select(html, ".markdown[data-body]")[-1]
    assert [t.name for t in select(markdown, "*") if text_of(t) == "the spec"] == ["span"]
    assert [a["href"] for a in select(markdown, "a") if text_of(a) == "the site"] == ["https://example.com/"]
    assert server_only(html) == []


def export_zip(path: Path, images: list[bytes]) -> None:
    """A dsh export ZIP whose one prompt shows `images`, each a PNG the archive carries."""
    ids = ["sha256:" + hashlib.sha256(image).hexdigest() for image in images]
    b = LogBuilder()
    b.turn(1)
    prompt = next(e for e in b.events if e["type"] == "user/message")
    prompt["data"]["content"] += [
        {
            "type": "image",
            "attachment": {"attachmentId": a, "mediaType": "image/png", "width": 1, "height": 1, "name": "dot.png"},
        }
        for a in ids
    ]
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("session.jsonl", b"".join(orjson.dumps(x) + b"\n" for x in [header("with-images"), *b.events]))
        for a, image in dict(zip(ids, images, strict=True)).items():
            z.writestr(f"media/{a}.png", image)


def test_an_export_zip_image_is_carried_in_the_file(tmp_path: Path) -> None:
    png = png_1x1()
    export_zip(tmp_path / "export.zip", [png])
    out = tmp_path / "page.html"
    assert main(["render", str(tmp_path / "export.zip"), "-o", str(out)]) == 0
    html = out.read_text()
    assert attrs(html, "img.attachment", "src") == [f"data:image/png;base64,{base64.b64encode(png).decode()}"]
    assert fetched(html) == [], "no image is fetched"
    assert not select(html, "[data-image-tag], [data-images-left-out]")


def test_images_past_the_budget_are_named_in_place_and_counted(tmp_path: Path) -> None:
    first, second, third = png_1x1(), png_1x1() + b"\0" * 4000, png_1x1() + b"\0" * 10
    export_zip(tmp_path / "export.zip", [first, second, third])
    html = render_path(str(tmp_path / "export.zip"), media_budget=1000)
    shown = attrs(html, "img.attachment", "src")
    assert all(s.startswith("data:image/png;base64,") for s in shown)
    # the big one does not fit; a later small one does
    assert [base64.b64decode(s.removeprefix("data:image/png;base64,")) for s in shown] == [first, third]
    assert len(select(html, "[data-image-tag]")) == 1
    note = text(html, "[data-images-left-out]")
    assert note.startswith("1 image (4.0 KiB) is not in this file")
    assert fetched(html) == [], "no image is fetched"


def test_an_image_shown_twice_costs_the_budget_twice(tmp_path: Path) -> None:
    png = png_1x1()  # 69 bytes
    export_zip(tmp_path / "export.zip", [png, png])
    roomy = render_path(str(tmp_path / "export.zip"), media_budget=2 * len(png))
    assert attrs(roomy, "[src]", "src") == [f"data:image/png;base64,{base64.b64encode(png).decode()}"] * 2
    tight = render_path(str(tmp_path / "export.zip"), media_budget=2 * len(png) - 1)
    assert "data:image" not in tight and len(select(tight, "[data-image-tag]")) == 2
    assert "1 image (69 Bytes) is not in this file" in text(tight, "[data-images-left-out]")


@pytest.mark.corpus
def test_no_corpus_session_exports_a_link_to_the_server(corpus_dir: Path) -> None:
    registry = Registry([str(corpus_dir / "sessions"), str(corpus_dir / "dsh-home"), str(corpus_dir / "exports")])
    entries = registry.entries()
    assert len(entries) >= 100
    linked = [e.key for e in entries if server_only(render_session(registry, e.key))]
    assert linked == []


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
    assert one(out.read_text(), "html")["lang"] == "zh-CN"


def test_render_replaces_an_earlier_export_only_once_it_is_whole(tmp_path: Path) -> None:
    log = tmp_path / "one.jsonl"
    log.write_bytes(jsonl_bytes("whole-export"))
    out = tmp_path / "export.html"
    out.write_text("an earlier export")
    err = io.StringIO()
    assert run_render(str(log), output=str(tmp_path / "gone" / "x.html"), session=None, lang="en", err=err) == 2
    assert "cannot write" in err.getvalue() and not (tmp_path / "gone").exists()
    assert main(["render", str(log), "-o", str(out)]) == 0
    assert out.read_text().rstrip().endswith("</html>") and "an earlier export" not in out.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.html", "one.jsonl"], "no .part left"


def test_settings_are_named_checked_and_explain_how_to_raise_them() -> None:
    settings = Settings().with_setting("max_upload_mb", "512").with_setting("max_sessions_per_upload", "7")
    assert settings.limits().max_upload_bytes == 512 << 20 and settings.limits().max_sessions_per_upload == 7
    assert settings.raise_hint("max_upload_bytes") == (
        "max_upload_mb",
        "max_upload_mb is 512; raise it with: dsh-inspect serve --setting max_upload_mb 2048",
    )
    with pytest.raises(ValueError, match="unknown setting 'max_rows'; known: max_upload_mb"):
        Settings().with_setting("max_rows", "1")
    with pytest.raises(ValueError, match="needs a whole number"):
        Settings().with_setting("max_upload_mb", "lots")
    with pytest.raises(ValueError, match="at least 1"):
        Settings().with_setting("max_decompressed_mb", "0")
    assert {d.name for d in SETTINGS} == {
        "max_upload_mb",
        "max_decompressed_mb",
        "max_sessions_per_upload",
        "max_line_mb",
        "cache_mb",
        "window_rows",
        "first_screen_events",
        "body_cap",
        "read_cache_mb",
        "database_seconds",
        "database_connections",
        "index_workers",
        "search_wait_ms",
        "list_wait_ms",
        "audit_days",
        "token_attempts",
        "session_hours",
        "live_streams_per_client",
        "upload_mb_per_hour",
        "max_stored_gb",
        "max_project_gb",
        "server_seconds_per_minute",
        "requests_per_client",
    }
    assert Settings().with_setting("window_rows", "30").window_rows == 30
    assert Settings().body_cap == 20_000 and Settings().with_setting("body_cap", "500").body_cap == 500


def test_every_setting_is_documented_in_the_readme_with_its_default() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Settings", 1)[1]
    for doc in SETTINGS:
        assert f"| `{doc.name}` | {doc.default} |" in section, doc.name
        assert getattr(Settings(), doc.name) == doc.default and doc.help


def test_serve_refuses_a_bad_setting_before_it_binds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["serve", "--port", "1", "--data-dir", str(tmp_path), "--setting", "max_upload_mb", "-3"])
    assert code == 2 and "max_upload_mb must be at least 1" in capsys.readouterr().err


def test_serve_takes_its_own_prices_and_a_currency_and_refuses_bad_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    own = tmp_path / "prices.json"
    own.write_text('[{"model": "our-model", "route": "our-gateway", "input": 1.5, "output": 6}]')
    seen: dict[str, Settings] = {}
    monkeypatch.setattr("dsh_inspect.cli.run_serve", lambda paths, settings, **kw: seen.update(settings=settings) or 0)
    assert main(["serve", "--prices", str(own), "--currency", "eur=0.9"]) == 0
    prices = seen["settings"].prices()
    assert (prices.currency, str(prices.rate)) == ("EUR", "0.9")
    assert [(o.model, o.route, o.input, o.output) for o in prices.overrides] == [("our-model", "our-gateway", 1.5, 6)]
    assert main(["serve", "--currency", "EUR"]) == 2 and "CODE=RATE" in capsys.readouterr().err
    own.write_text('[{"model": "our-model", "input": "cheap", "output": 6}]')
    assert main(["serve", "--prices", str(own)]) == 2
    assert "our-model: input is a price per million tokens" in capsys.readouterr().err


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
    seen: dict[str, Settings] = {}
    monkeypatch.setattr("dsh_inspect.cli.run_serve", lambda paths, settings, **kw: seen.update(settings=settings) or 0)
    assert main(["serve", "--allow-host", "inspector.lan", "--allow-host", "box"]) == 0
    assert seen["settings"].allowed_hosts == ("inspector.lan", "box")
