"""Hashed static names that hold for ES modules too.

Our scripts (static/js) are modules that import each other by relative name. collectstatic gives
every file a content-hashed name; the imports inside our modules must name those hashed copies as
well, or a page would load a module twice (once as the template names it, once as an import names
it), each with its own state. Django rewrites the imports when asked
(`support_js_module_import_aggregation`); we ask only for our own `js/`, not for the vendored
libraries, whose minified text is not ours to rewrite.
"""

from __future__ import annotations

from django.contrib.staticfiles.storage import ManifestStaticFilesStorage
from whitenoise.storage import CompressedManifestStaticFilesStorage

# Django's own patterns for module imports (private to it, not in its stubs; checked by
# tests/test_script_modules.py on the collected copies)
_, _MODULE_IMPORTS = ManifestStaticFilesStorage._js_module_import_aggregation_patterns  # type: ignore[attr-defined]


class StaticStorage(CompressedManifestStaticFilesStorage):
    patterns = (*ManifestStaticFilesStorage.patterns, ("js/*.js", _MODULE_IMPORTS))
