"""Queries rewritten for speed give the answer of their plain form (issue 11, PostgreSQL plans).

Each test compares the fast form with the obvious one (the ORM query or template it replaced)
on the shared fixtures and on a root from the benchmark's generator, on SQLite and on
PostgreSQL alike (CI runs this module on both).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from django.template import engines
from django.utils import translation

from canvases import lint
from canvases.indexing import parsed
from intake.ingest import ingest_path
from sessions.models import Agent, AgentSession, Canvas, Ref, Row
from sessions.rows_html import rows_html
from sessions.selectors import session_rows, unplaced_page

pytestmark = pytest.mark.django_db
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def generated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small root from bench/generate_root.py (null and wait rows, one ref per row), with a
    few refs dropped from the index so that some rows point at refs that are not there."""
    spec = importlib.util.spec_from_file_location("generate_root", REPO / "bench/generate_root.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "generate_root", module)
    spec.loader.exec_module(module)
    root = tmp_path / "generated"
    module.generate_root(root, 900, agents=2, sessions_per_agent=3, ref_bytes=120, canvas_nodes=40)
    ingest_path(root)
    for agent in Agent.objects.all():
        doomed = list(Ref.objects.filter(agent=agent).order_by("name")[::9])
        Ref.objects.filter(pk__in=[r.pk for r in doomed]).delete()
    return root


@pytest.fixture
def fixtures(fixtures_root: Path) -> Path:
    for root in ("fixture-a-upstream", "fixture-b-wild", "fixture-c-enhanced"):
        ingest_path(fixtures_root / root)
    return fixtures_root


def plain_rows_without_ref(agent: Agent, node_ids: list[str], cap: int) -> list[tuple]:
    """The lint's former query: the first ``cap`` rows with a ref on these nodes, in file
    order, whose result_ref is no indexed ref name."""
    capped = (
        Row.objects.filter(agent=agent, node_id__in=node_ids)
        .exclude(result_ref__isnull=True)
        .order_by("session__session_id", "line_no")[:cap]
    )
    names = set(Ref.objects.filter(agent=agent).values_list("name", flat=True))
    return [(r.node_id, r.tool_call_id, r.result_ref) for r in capped if r.result_ref not in names]


@pytest.mark.parametrize("cap", [1, 7, 60, 2000])
@pytest.mark.parametrize("data", ["fixtures", "generated"])
def test_lint_missing_refs_same_as_the_plain_query(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, data: str, cap: int
) -> None:
    request.getfixturevalue(data)
    monkeypatch.setattr(lint, "MISSING_REF_ROWS", cap)
    seen = 0
    for canvas in Canvas.objects.select_related("agent").order_by("pk"):
        node_ids = list(parsed(canvas.text).nodes)
        expected = plain_rows_without_ref(canvas.agent, node_ids, cap)
        assert lint.rows_without_indexed_ref(canvas.agent, node_ids) == expected, canvas.filename
        seen += len(expected)
    if data == "generated":
        assert seen, "no row pointed at a dropped ref: the comparison proved nothing"


def test_lint_looks_only_at_nodes_with_rows_and_finds_the_same(generated: Path) -> None:
    for canvas in Canvas.objects.select_related("agent"):
        report = lint.canvas_lint(canvas.agent, canvas)
        expected = plain_rows_without_ref(canvas.agent, list(parsed(canvas.text).nodes), 2000)
        assert [(m["node_id"], m["tool_call_id"], m["ref"]) for m in report["missing_refs"]] == [
            item for item in expected if item[2].startswith("refs/")
        ]


# The row list as it was written in the template (templates/agent_sessions/_rows.html before
# sessions.rows_html): the reference the Python version must match, value for value.
TEMPLATE_ROWS = """{% load i18n memviz %}
<ol class="rows">
{% for r in rows %}
  <li class="row{% if r.offloaded == 'deleted' %} deleted{% endif %}" id="row-{{ r.id }}">
    <div class="row-head">
      <span class="score" title="{% translate 'replaceability score' %}">{{ r.score|default_if_none:"–" }}</span>
      <code class="tool-call">{% if r.tool_call %}{{ r.tool_call }}{% else %}{% translate "(no tool_call)" %}{% endif %}</code>
      {% if show_node %}<span class="node-ref">{% if r.node_id and r.node_id != "wait" %}<a href="{% url 'node-locate' agent_slug %}?id={{ r.node_id|urlencode:'' }}">{{ r.node_id }}</a>{% elif r.node_id %}{{ r.node_id }}{% else %}null{% endif %}</span>{% endif %}
      {% if r.offloaded %}<span class="badge offloaded-{{ r.offloaded }}">{% blocktranslate with state=r.offloaded %}offloaded: {{ state }}{% endblocktranslate %}</span>{% endif %}
      <span class="muted small">{% if r.timestamp %}<time datetime="{{ r.timestamp }}">{{ r.timestamp }}</time>{% endif %} · {% if r.session %}<a href="{% url 'session' agent_slug r.session %}?line={{ r.line_no }}#row-{{ r.id }}">{{ r.session }}:{{ r.line_no }}</a>{% else %}{{ r.session }}:{{ r.line_no }}{% endif %}</span>
    </div>
    <p class="summary">{{ r.summary }}</p>
    {% if r.ref %}
      {% if r.ref.error %}<p class="warn small">{% blocktranslate with ref=r.result_ref error=r.ref.error %}ref {{ ref }} {{ error }}{% endblocktranslate %}</p>
      {% elif r.ref.exists %}
        <details class="ref" hx-get="{% url 'ref' agent_slug r.ref.url_name %}" hx-trigger="toggle once" hx-target="find .ref-body">
          <summary>{{ r.ref.name }} <a href="{% url 'ref' agent_slug r.ref.url_name %}" class="small">{% translate "open" %}</a></summary>
          <div class="ref-body"><span class="muted">{% translate "loading…" %}</span></div>
        </details>
      {% else %}<p class="warn small">{% blocktranslate with ref=r.result_ref %}ref {{ ref }} is missing on disk{% endblocktranslate %}</p>{% endif %}
    {% else %}<p class="muted small">{% translate "no result_ref" %}</p>{% endif %}
  </li>
{% empty %}
  <li class="empty">{% translate "No rows." %}</li>
{% endfor %}
</ol>"""


def shape(html: str) -> list[tuple]:
    """Every element with its attributes and, for leaves, its text (whitespace collapsed)."""
    soup = BeautifulSoup(html, "html.parser")
    return [
        (tag.name, sorted(tag.attrs.items()), " ".join(tag.get_text(" ").split()))
        for tag in soup.find_all(True)
    ]


def hostile(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The same rows with every branch of the list taken at least once, and markup in values."""
    out = [dict(r, ref=dict(r["ref"]) if r["ref"] else None) for r in (list(rows) * 12)[:12]]
    assert len(out) == 12
    out[0].update(offloaded="deleted", score=None)
    out[1].update(node_id="wait", offloaded="true", score=2.5)
    out[2].update(node_id=None, tool_call="")
    out[3].update(node_id="a/b c&d<'\"x>?#", summary="<script>alert(1)</script> & 修复")
    out[4].update(ref=None, result_ref=None)
    out[5].update(ref={"name": None, "url_name": None, "exists": False, "error": "refused: <x>"})
    out[6]["ref"] = dict(out[6]["ref"] or {}, exists=False, name="refs/gone.md")
    out[7]["ref"] = {"name": "refs/a b&c%.md", "url_name": "a b&c%.md", "exists": True}
    out[8].update(session="s<1>", timestamp="2026-06-01T09:00:00+08:00 <b>")
    out[9].update(line_no=123456, score=7.25)
    return out


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("data", ["fixtures", "generated"])
def test_row_list_is_the_template_markup(
    request: pytest.FixtureRequest, data: str, language: str
) -> None:
    request.getfixturevalue(data)
    template = engines["django"].from_string(TEMPLATE_ROWS)
    cases: list[tuple[Agent, Sequence[Mapping[str, Any]]]] = []
    for agent in Agent.objects.all():
        for session in AgentSession.objects.filter(agent=agent):
            cases.append((agent, session_rows(agent, session, {})["rows"]))
        cases.append((agent, unplaced_page(agent)["unplaced"]))
    big = max((rows for _agent, rows in cases), key=len)
    first = Agent.objects.first()
    assert first is not None
    cases.append((first, hostile(big)))
    cases.append((first, []))
    with translation.override(language):
        for agent, rows in cases:
            for show_node in (True, False):
                context = {"rows": rows, "agent_slug": agent.slug, "show_node": show_node}
                expected = shape(template.render(context))
                assert shape(rows_html(rows, agent_slug=agent.slug, show_node=show_node)) == (
                    expected
                )
    if language == "zh-hans":  # the comparison ran through translated strings
        with translation.override(language):
            assert "打开" in str(rows_html(big, agent_slug="x", show_node=True))


def test_fresh_wait_rows_same_as_parsing_every_stamp(tmp_path: Path) -> None:
    """The session page's badge key reads only wait rows whose stamp can be recent; the set of
    fresh ones must be what parsing every wait row's stamp gives."""
    from datetime import UTC, datetime, timedelta

    from debugging import debug_selectors
    from debugging.diagnostics import WAIT_WINDOW
    from sessions.instants import parse_instant

    now = datetime.now(UTC)

    def stamp(delta: timedelta, offset_hours: int, fmt: str = "%Y-%m-%dT%H:%M:%S.%f") -> str:
        local = now + delta + timedelta(hours=offset_hours)
        sign = "+" if offset_hours >= 0 else "-"
        return local.strftime(fmt) + f"{sign}{abs(offset_hours):02d}:00"

    stamps = [
        stamp(timedelta(seconds=-30), 14),
        stamp(timedelta(seconds=-30), -12),
        stamp(timedelta(seconds=-60), 0).replace("+00:00", "Z"),
        (now - timedelta(seconds=10)).strftime("%Y-%m-%dT%H:%M:%S"),  # no offset: UTC
        " " + stamp(timedelta(seconds=-5), 8),  # leading space, still parsed
        stamp(timedelta(seconds=-20), 8, "%Y%m%dT%H%M%S"),  # basic format
        stamp(timedelta(seconds=-30), 8)[:-6] + "123456789+08:00",  # nanoseconds
        stamp(-WAIT_WINDOW - timedelta(seconds=5), -12),  # just aged out
        stamp(timedelta(days=-1), 14),
        stamp(timedelta(days=-400), 0),
        "not a time",
        "",
    ]
    agent_dir = tmp_path / "root" / "waiting"
    agent_dir.mkdir(parents=True)
    (agent_dir / "offload-s1.jsonl").write_text(
        "".join(
            json.dumps({"tool_call_id": f"w{i}", "node_id": "wait", "timestamp": s}) + "\n"
            for i, s in enumerate(stamps)
        ),
        "utf-8",
    )
    ingest_path(tmp_path / "root")
    agent = Agent.objects.get(slug="waiting")
    expected = {
        pk
        for pk, s in Row.objects.filter(agent=agent, node_id="wait").values_list("pk", "timestamp")
        if (m := parse_instant(s)) is not None and m >= now - WAIT_WINDOW
    }
    assert len(expected) == 7
    assert debug_selectors._fresh_waits(agent, now) == expected
