"""Issue 22 item 14: no absolute local path in anonymous answers.

The home page's JSON named the data root, each agent's JSON its folder, job pages the folder an
ingest read, uploads their folder: where this machine keeps its data, to anyone who could reach
the port. Staff still see them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]
PASSWORD = "pw-123456-ok"
SESSION = "3f2b9c1e-7a41-4d2e-9b0a-5c6e1f2d8a90"
CANVAS = "001-fix-login-timeout.mmd"
PAGES = [
    "/",
    "/search/?q=session",
    "/sessions/",
    "/jobs/1/",
    "/a/main/",
    f"/a/main/s/{SESSION}/",
    f"/a/main/s/{SESSION}/replay/",
    f"/a/main/s/{SESSION}/diagnostics/",
    f"/a/main/s/{SESSION}/ledger/",
    f"/a/main/s/{SESSION}/report.md",
    f"/a/main/c/{CANVAS}/",
    f"/a/main/c/{CANVAS}/n/001-N2/",
    f"/a/main/c/{CANVAS}/history/",
    "/a/main/diagnostics/",
    "/a/main/ledger/",
    "/a/main/refs/2026-06-10T09-12-03-417p08-00.md",
]


def test_anonymous_answers_name_no_local_folder(
    served, http_session, tmp_path: Path
) -> None:
    server = served(users=[("ana", PASSWORD, False), ("boss", PASSWORD, True)])
    root = Path(server.env["MEMVIZ_DATA_ROOT"])
    signed_in = http_session(server)
    assert signed_in.login("ana", PASSWORD) == 302
    ingest = signed_in.request(
        "POST",
        "/ingest/?format=json",
        headers={
            "X-CSRFToken": signed_in.cookie("csrftoken")[1],
            "Origin": server.url,
            "Referer": server.url + "/",
        },
    )
    assert ingest.status == 202, ingest.body[:300]
    assert str(root) not in ingest.body.decode()  # not staff: the job's folder is named, not shown
    secrets = [str(tmp_path), str(root), str(root.resolve()), str(server.var)]
    anonymous = http_session(server)
    leaks = []
    for page in PAGES:
        for variant in (page, page + ("&" if "?" in page else "?") + "format=json"):
            response = anonymous.request("GET", variant)
            assert response.status in (200, 404), (variant, response.status)
            body = response.body.decode("utf-8", "replace")
            leaks += [(variant, s) for s in secrets if s in body]
    assert leaks == []
    # a signed-in user who is not staff sees no paths either; staff do
    assert str(root) not in signed_in.request("GET", "/?format=json").body.decode()
    staff = http_session(server)
    assert staff.login("boss", PASSWORD) == 302
    assert str(root) in staff.request("GET", "/?format=json").body.decode()
