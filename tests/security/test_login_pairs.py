"""Issue 22 item 7: the login lockout is per (account, address) pair.

Ten failed logins with made-up user names from an address locked the real admin out on that
address (anyone who could reach the port could repeat it every 15 minutes).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.slow]
PASSWORD = "pw-123456-ok"


def test_made_up_names_from_an_address_do_not_lock_the_admin_there(served, http_session) -> None:
    server = served(users=[("admin", PASSWORD, True)], MEMVIZ_LOGIN_MAX_FAILURES="5")
    attacker = http_session(server)
    for number in range(12):
        assert attacker.login(f"nobody{number}", "guess") == 200
    assert http_session(server).login("admin", PASSWORD) == 302
    # the pair itself still locks: five wrong passwords for admin, then even the right one waits
    guesser = http_session(server)
    for _ in range(5):
        assert guesser.login("admin", "wrong") == 200
    assert guesser.login("admin", PASSWORD) == 429
