"""Mirror a local agent folder to a memviz server: ``python -m memviz.push PATH URL TOKEN``.

PATH is one agent folder (``~/.openclaw/context-offload/<agent>``); URL is the memviz server
(``http://host:8000``) or the full stream URL (``…/api/stream/<agent>/``); TOKEN comes from
``manage.py stream_token <agent>`` on the server. The client tails the folder: new JSONL rows from
the last byte offset (a partial last line waits for its newline; a file rewritten in place —
the plugin's backfill — is sent again whole, and the server keeps each tool_call_id once), new or
changed refs, canvases, state.json and sessions-registry.json. Batches are retried with backoff;
progress only advances after the server accepted a batch, so nothing is lost on a network error.
Plain Python: no Django needed on the agent's machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentfs.jsonl import TailState, tail_rows
from agentfs.layout import discover_agents, is_ignored_name

MAX_BATCH_BYTES = 1024 * 1024


class PushRefused(RuntimeError):
    """The server refused a batch for good (bad token, too large): retrying will not help."""


@dataclass
class PushState:
    tails: dict[str, TailState] = field(default_factory=dict)
    seen: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (size, mtime_ns)


def _stat_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


class Pusher:
    def __init__(self, folder: Path, url: str, token: str, *, agent: str | None = None) -> None:
        self.folder = Path(folder).expanduser().resolve()
        self.agent = agent or self.folder.name
        url = url.rstrip("/")
        self.url = url + "/" if "/api/stream/" in url else f"{url}/api/stream/{self.agent}/"
        self.token = token
        self.state = PushState()
        self.sent_events = 0

    # --- collecting -----------------------------------------------------------------------
    def collect(self) -> list[tuple[dict[str, Any], Any]]:
        """(event, commit) pairs for everything new; ``commit()`` records it as sent."""
        found = discover_agents(self.folder)
        if len(found) != 1:
            raise SystemExit(f"{self.folder}: expected one agent folder, found {len(found)}")
        agent = found[0]
        out: list[tuple[dict[str, Any], Any]] = []
        for session_file in agent.session_files:
            out += self._rows(session_file.path, session_file.session_id)
        refs_dir = agent.refs_dir
        if refs_dir.is_dir():
            for path in sorted(refs_dir.iterdir()):
                if path.suffix == ".md" and not is_ignored_name(path.name) and path.is_file():
                    out += self._whole(
                        path, lambda p: {"type": "ref", "name": p.name, "text": _text(p)}
                    )
        for path in agent.mmd_files:
            out += self._whole(path, lambda p: {"type": "canvas", "name": p.name, "text": _text(p)})
        for json_path, kind in ((agent.state_path, "state"), (agent.registry_path, "registry")):
            if json_path is not None and json_path.is_file():
                out += self._whole(json_path, lambda p, kind=kind: _json_event(kind, p))
        return out

    def _whole(self, path: Path, make: Any) -> list[tuple[dict[str, Any], Any]]:
        key = _stat_key(path)
        name = str(path)
        if key is None or self.state.seen.get(name) == key:
            return []
        event = make(path)

        def commit() -> None:
            self.state.seen[name] = key

        if event is None:
            commit()
            return []
        return [(event, commit)]

    def _rows(self, path: Path, session_id: str) -> list[tuple[dict[str, Any], Any]]:
        name = str(path)
        key = _stat_key(path)
        if key is None or self.state.seen.get(name) == key:
            return []
        try:
            # appended → the new rows; rewritten in place → every row again (the server dedups)
            chunk, new_tail, _rewritten = tail_rows(path, self.state.tails.get(name))
        except FileNotFoundError:
            return []
        events: list[tuple[dict[str, Any], Any]] = [
            ({"type": "row", "session": session_id, "row": row.data}, None) for row in chunk.rows
        ]

        def commit() -> None:
            self.state.tails[name] = new_tail
            self.state.seen[name] = key

        if events:
            events[-1] = (events[-1][0], commit)
        else:
            commit()
        return events

    # --- sending --------------------------------------------------------------------------
    def push_once(self) -> int:
        pending = self.collect()
        batch: list[bytes] = []
        commits: list[Any] = []
        size = 0
        sent = 0
        for event, commit in pending:
            line = json.dumps(event, ensure_ascii=False).encode("utf-8")
            if batch and size + len(line) + 1 > MAX_BATCH_BYTES:
                sent += self._flush(batch, commits)
                batch, commits, size = [], [], 0
            batch.append(line)
            size += len(line) + 1
            if commit is not None:
                commits.append(commit)
        if batch:
            sent += self._flush(batch, commits)
        return sent

    def _flush(self, batch: list[bytes], commits: list[Any]) -> int:
        result = self.post(b"\n".join(batch))
        for error in result.get("errors", []):
            print(f"push: event refused: line {error['line']}: {error['reason']}", file=sys.stderr)
        for commit in commits:
            commit()
        self.sent_events += len(batch)
        return len(batch)

    def post(self, body: bytes, *, attempts: int = 8) -> dict[str, Any]:
        delay = 0.25
        for attempt in range(1, attempts + 1):
            request = urllib.request.Request(
                self.url,
                data=body,
                method="POST",
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/x-ndjson",
                },
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    return json.loads(response.read() or b"{}")
            except urllib.error.HTTPError as exc:
                if exc.code == 400:
                    return json.loads(exc.read() or b"{}")
                if exc.code in (401, 403, 404, 413):
                    raise PushRefused(
                        f"{exc.code}: {exc.read()[:300].decode('utf-8', 'replace')}"
                    ) from exc
                problem = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                problem = str(exc)
            if attempt == attempts:
                raise ConnectionError(f"push failed after {attempts} attempts: {problem}")
            print(f"push: {problem}; retrying in {delay:.2f}s", file=sys.stderr)
            time.sleep(delay)
            delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    def run(self, *, interval: float = 0.5, once: bool = False) -> None:
        while True:
            try:
                sent = self.push_once()
                if sent:
                    print(f"push: {sent} events ({self.sent_events} in all)", file=sys.stderr)
            except ConnectionError as exc:
                print(f"push: {exc}", file=sys.stderr)
            if once:
                return
            time.sleep(interval)


def _text(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace")


def _json_event(kind: str, path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None  # mid-write or corrupt (or hostile nesting): sent once it parses
    if not isinstance(data, dict):
        return None
    return {"type": kind, kind: data}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m memviz.push", description=__doc__.split("\n")[0]
    )
    parser.add_argument("path", help="the local agent folder to mirror")
    parser.add_argument("url", help="memviz server URL, e.g. http://127.0.0.1:8000")
    parser.add_argument(
        "token",
        help="token printed by `manage.py stream_token <agent>` (an older token that starts "
        "with '-': write `--` before it)",
    )
    parser.add_argument("--agent", help="agent name on the server (default: the folder name)")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between scans")
    parser.add_argument("--once", action="store_true", help="push what is there, then exit")
    args = parser.parse_args(argv)
    pusher = Pusher(Path(args.path), args.url, args.token, agent=args.agent)
    try:
        pusher.run(interval=args.interval, once=args.once)
    except PushRefused as exc:
        print(f"push: refused by the server: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
