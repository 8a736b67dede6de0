"""Seeded mutations of memory-folder inputs (JSONL lines, canvases, state files, push bodies).

Not a test module: tests/security/test_fuzz.py and bench runs import it by path.
"""

from __future__ import annotations

import json
import random

SEED_LINES = [
    '{"tool_call_id":"call_00_a","tool_call":"read: x","summary":"s","timestamp":"2026-06-10T09:12:03.417+08:00","score":8,"node_id":"001-N2","result_ref":"refs/a.md","offloaded":true}',
    '{"tool_call_id":"toolu_bdrk_01","summary":"<img src=x>","score":null,"node_id":"wait","extra":{"a":[1,2,{"b":"c"}]}}',
]
SEED_CANVASES = [
    '%%{ "taskGoal": "t", "progress": 40 }%%\nflowchart TD\n    001-N1["a: b<br/>status: done<br/>summary: c"]\n'
    '    subgraph s1 ["g"]\n        001-N2("x") & 001-N3{"y"}\n    end\n    001-N1 -->|l| 001-N2 --> s1\n'
    '    click 001-N1 href "http://x"\n    classDef done fill:#cfc\n    class 001-N1 done\n    style 001-N2 fill:#fff\n',
    "flowchart LR\n    A[Start] --> B[Open]\n    B -.-> C\n    C == text ==> D\n    D -- t --> E\n"
    "    E --o F\n    subgraph outer\n        subgraph inner [I]\n            F\n        end\n    end\n    F --> inner\n",
]
SEED_STATES = [
    '{\n  "activeMmdFile": "001-a.mmd",\n  "activeMmdId": "a",\n  "mmdCounter": 1,\n  "lastSessionKey": "agent:main:x"\n}',
]
SEED_EVENTS = [
    '{"type":"row","session":"s1","row":{"tool_call_id":"c1","summary":"x"}}',
    '{"type":"ref","name":"refs/a.md","text":"# Tool Result: x"}',
    '{"type":"canvas","name":"001-a.mmd","text":"flowchart TD\\n  A"}',
    '{"type":"state","state":{"activeMmdFile":"001-a.mmd"}}',
]
TOKENS = [
    "<img src=http://evil.example/x.png>",
    "%%{init: {}}%%",
    "`",
    '"',
    "\\",
    "]",
    "[",
    "(",
    ")",
    "{",
    "}",
    "|",
    "-->",
    "&",
    "#lt;",
    "&gt;",
    "\n",
    "\r\n",
    "\x00",
    "\u2028",
    "\ufeff",
    "\ud800",
    "subgraph x",
    "end",
    ";",
    ":::c",
    "@{ shape: image }",
    "click A call x()",
    "NaN",
    "1e999",
]


def _deep(rng: random.Random) -> str:
    depth = rng.choice([70, 1000, 5000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return opener * depth + "1" + closer * depth


def mutate(text: str, rng: random.Random) -> str:
    """One to four random edits: flips, insertions of tricky tokens, cuts, repeats, deep nesting."""
    for _ in range(rng.randint(1, 4)):
        if not text:
            text = rng.choice(TOKENS)
        pos = rng.randrange(len(text) + 1)
        action = rng.randrange(7)
        if action == 0:
            text = text[:pos] + rng.choice(TOKENS) + text[pos:]
        elif action == 1:
            text = text[:pos] + chr(rng.randrange(0x20, 0x2FF)) + text[pos + 1 :]
        elif action == 2:
            text = text[:pos]
        elif action == 3:
            end = min(len(text), pos + rng.randrange(1, 40))
            text = text[:pos] + text[pos:end] * rng.randrange(2, 6) + text[end:]
        elif action == 4:
            text = text[:pos] + _deep(rng) + text[pos:]
        elif action == 5:
            text = text[:pos] + text[pos + rng.randrange(1, 20) :]
        else:
            text = text[:pos] + "\n" + rng.choice(TOKENS) + text[pos:]
    return text


def corpus(kind: str, count: int, seed: int) -> list[str]:
    rng = random.Random(f"{kind}:{seed}")
    seeds = {
        "jsonl": SEED_LINES,
        "mmd": SEED_CANVASES,
        "state": SEED_STATES,
        "push": ["\n".join(SEED_EVENTS)],
    }[kind]
    return [mutate(rng.choice(seeds), rng) for _ in range(count)]


def encode(text: str) -> bytes:
    return text.encode("utf-8", errors="surrogatepass")


def is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except Exception:  # noqa: BLE001
        return False
