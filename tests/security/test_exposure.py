"""Item 4 of issue 10: exposure is decided by where memviz really listens, with real servers.

`manage.py run --host 0.0.0.0` served anonymous reads because only MEMVIZ_HOST was read; the
secret key was a built-in constant; the SQLite index was world-readable; behind an HTTPS proxy
the login POST was a CSRF 403; `check --deploy` had no clean production configuration.
"""

from __future__ import annotations

import http.client
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.pages import found

pytestmark = [pytest.mark.slow]

PUBLIC = "memviz.example.org"
PRODUCTION_ENV = {
    # the configuration README "Security" documents for a TLS-terminating reverse proxy
    "MEMVIZ_BEHIND_TLS_PROXY": "1",
    "MEMVIZ_TRUSTED_ORIGINS": f"https://{PUBLIC}",
    "MEMVIZ_DEBUG": "0",
}


def request(port: int, method: str, path: str, headers: dict | None = None, body: str = ""):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    connection.request(method, path, body=body or None, headers=headers or {})
    response = connection.getresponse()
    response.body = response.read().decode("utf-8", "replace")  # type: ignore[attr-defined]
    connection.close()
    return response


def start(live_helpers, tmp_path: Path, name: str, host: str, **env: str):
    var = tmp_path / f"var-{name}"
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    full_env = live_helpers.server_env(var, root, **env)
    full_env.pop("MEMVIZ_ANONYMOUS_VIEW")  # the default decides
    port = live_helpers.free_port()
    server = live_helpers.Server(
        full_env,
        port,
        tmp_path / f"{name}.log",
        ["run", "--no-worker", "--no-watch", "--host", host, "--port", str(port)],
    )
    server.env = full_env
    server.var = var
    try:
        live_helpers.wait_port(port, timeout=60, proc=server.proc)
    except Exception:
        print(server.log.read_text())
        server.stop()
        raise
    return server


def test_bound_to_all_interfaces_anonymous_reads_are_refused_even_on_loopback(
    live_helpers, tmp_path: Path
) -> None:
    exposed = start(live_helpers, tmp_path, "exposed", "0.0.0.0")
    local = start(live_helpers, tmp_path, "local", "127.0.0.1")
    try:
        home = request(exposed.port, "GET", "/")
        assert home.status == 302 and home.getheader("Location").startswith("/login/")
        assert request(exposed.port, "GET", "/?format=json").status == 403
        assert request(exposed.port, "GET", "/search/?q=x&format=json").status == 403
        assert "viewing needs a signed-in user" in exposed.log.read_text()
        # the same build on loopback keeps the anonymous local viewing it is meant for
        assert request(local.port, "GET", "/?format=json").status == 200
    finally:
        exposed.stop()
        local.stop()


def test_var_is_private_and_the_secret_key_is_generated_once(live_helpers, tmp_path: Path) -> None:
    server = start(live_helpers, tmp_path, "private", "127.0.0.1")
    server.stop()
    var = server.var
    mode = lambda p: stat.S_IMODE(os.stat(p).st_mode)  # noqa: E731
    assert mode(var) == 0o700
    assert mode(var / "memviz.sqlite3") == 0o600
    for extra in ("memviz.sqlite3-wal", "memviz.sqlite3-shm"):
        if (var / extra).exists():
            assert mode(var / extra) & 0o077 == 0, extra
    key = (var / "secret_key").read_text().strip()
    assert mode(var / "secret_key") == 0o600 and len(key) >= 50
    shown = live_helpers.run_manage(
        server.env, "shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)"
    )
    assert shown.stdout.strip().splitlines()[-1] == key  # the same key on every start
    assert "insecure" not in key
    chosen = live_helpers.run_manage(
        {**server.env, "MEMVIZ_SECRET_KEY": "k" * 60},
        "shell",
        "-c",
        "from django.conf import settings; print(settings.SECRET_KEY)",
    )
    assert chosen.stdout.strip().splitlines()[-1] == "k" * 60


def test_login_behind_a_tls_proxy_works_and_is_secure(live_helpers, tmp_path: Path) -> None:
    server = start(live_helpers, tmp_path, "proxy", "127.0.0.1", **PRODUCTION_ENV)
    try:
        env = {**server.env, "DJANGO_SUPERUSER_PASSWORD": "pw-123456-ok"}
        live_helpers.run_manage(
            env, "createsuperuser", "--noinput", "--username", "ana", "--email", "a@b.example"
        )
        proxied = {"Host": PUBLIC, "X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
        # published through a proxy: no anonymous reading, even though memviz binds loopback
        assert request(server.port, "GET", "/?format=json", proxied).status == 403
        # the proxy's plain-http side is redirected to https
        plain = request(server.port, "GET", "/login/", {"Host": PUBLIC})
        assert plain.status == 301 and plain.getheader("Location") == f"https://{PUBLIC}/login/"
        page = request(server.port, "GET", "/login/", proxied)
        assert page.status == 200
        assert "max-age=31536000" in page.getheader("Strict-Transport-Security")
        cookie = page.getheader("Set-Cookie")
        assert "Secure" in cookie
        csrf_name, csrf = found(r"([\w-]*csrftoken)=([^;]+)", cookie).groups()
        token = found(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.body).group(1)
        login = request(
            server.port,
            "POST",
            "/login/",
            {
                **proxied,
                "Origin": f"https://{PUBLIC}",
                "Referer": f"https://{PUBLIC}/login/",
                "Cookie": f"{csrf_name}={csrf}",
                "Content-Type": "application/x-www-form-urlencoded",
            },
            f"csrfmiddlewaretoken={token}&username=ana&password=pw-123456-ok",
        )
        assert login.status == 302, login.body[:500]
        session_cookie = [c for c in login.headers.get_all("Set-Cookie") if "_session=" in c][0]
        assert "Secure" in session_cookie and "HttpOnly" in session_cookie
        assert session_cookie.startswith("__Host-")  # only a secure page of this host sets it
    finally:
        server.stop()


def test_check_deploy_is_clean_in_the_documented_production_configuration(
    live_helpers, tmp_path: Path
) -> None:
    env = live_helpers.server_env(tmp_path / "var", tmp_path, **PRODUCTION_ENV)
    result = live_helpers.run_manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert "System check identified no issues" in result.stdout, result.stdout + result.stderr
    # and it is the production settings that make it clean: without them it warns
    bare = live_helpers.server_env(tmp_path / "var", tmp_path)
    warned = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=live_helpers.REPO,
        env=bare,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "security.W008" in warned.stderr + warned.stdout
