"""A memviz process that performs one merge through the real service (for the crash suite).

argv: canvas file name, node to keep, node to merge into it. With MEMVIZ_CRASH_AT set, the write
path stops at that point and prints it, so the test can SIGKILL this process right there.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memviz.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import User  # noqa: E402

from canvases import services  # noqa: E402
from sessions.models import Canvas  # noqa: E402

canvas = Canvas.objects.get(filename=sys.argv[1])
print("started", flush=True)
out = services.canvas_apply_edit(
    canvas=canvas,
    op="merge",
    params={"nodes": [sys.argv[2], sys.argv[3]]},
    base_hash=canvas.content_hash,
    user=User.objects.get(username="crash"),
)
print("done", out.revision.number, flush=True)
