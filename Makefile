# memviz: `make run` installs everything and starts the app; `make test` runs the whole suite.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
APT_TEST_PACKAGES := chromium redis-server postgresql fonts-noto-cjk gettext
# gettext's msgfmt compiles the UI translations (locale/) at set-up.
APT_SETUP_PACKAGES := gettext

.PHONY: run test setup setup-deps test-deps lint bench-quick clean messages web worker watch migrate

run: setup
	$(BIN)/python manage.py run

# --- scale-out (docs/deploy.md): settings come from the environment (DATABASE_URL, REDIS_URL,
# MEMVIZ_DATA_ROOT, MEMVIZ_SHARED_DIR, MEMVIZ_SECRET_KEY). `make setup` once per machine first.
HOST ?= 127.0.0.1
PORT ?= 8000
NAME ?= worker1
CONCURRENCY ?= 2

# A web process; its watcher stands by and takes over when the elected one dies.
web:
	$(BIN)/python manage.py run --no-worker --host $(HOST) --port $(PORT)

# A Celery worker, started again whenever it exits: NAME must differ between workers of one machine.
worker:
	$(BIN)/python manage.py worker --name $(NAME) --concurrency $(CONCURRENCY)

# A watcher on its own (optional: every `make web` brings one); any number, one is elected.
watch:
	$(BIN)/python manage.py watch

migrate:
	$(BIN)/python manage.py migrate

setup: setup-deps $(VENV)/.installed static/vendor/.installed staticfiles/staticfiles.json
	$(BIN)/python manage.py compilemessages --ignore=.venv --ignore=node_modules -v 0

setup-deps:
	@dpkg -s $(APT_SETUP_PACKAGES) >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(APT_SETUP_PACKAGES) >/dev/null; }

# After marking new strings: refresh locale/*/django.po (then translate the empty msgstr).
messages: $(VENV)/.installed
	$(BIN)/python manage.py makemessages -l zh_Hans --no-obsolete --ignore=.venv --ignore=node_modules --ignore=static/vendor --ignore=var

$(VENV)/.installed: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

static/vendor/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	$(BIN)/python scripts/vendor_assets.py
	touch $@

# Hashed, brotli/gzip-compressed copies of static/ that WhiteNoise serves (memviz/settings.py),
# made again whenever a file under static/ changes.
staticfiles/staticfiles.json: $(VENV)/.installed static/vendor/.installed $(shell find static -type f -not -path 'static/vendor/*' 2>/dev/null)
	$(BIN)/python manage.py collectstatic --noinput --clear -v0

# System packages the tests drive for real (Debian; the tests run as root on a fresh machine).
test-deps:
	@missing=""; for p in $(APT_TEST_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# mypy (django-stubs) over the whole tree: the apps, memviz, the benchmarks, scripts, the demo and
# the tests. The folders are pyproject.toml's [tool.mypy] files, so a bare `mypy` (an editor's, a
# person's) checks what this does.
lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python manage.py makemigrations --check --dry-run

test: test-deps setup lint
	scripts/run_tests.sh

bench-quick: setup
	scripts/run_benches.sh --quick

clean:
	rm -rf $(VENV) node_modules static/vendor staticfiles var
