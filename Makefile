# Smart Motion — the README's two commands, `make demo` and `make test`, are all the set-up.
# The virtual environment is created on first use from the pinned requirements.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# Blender's own extension builder, shipped inside the bpy module. Expanded only
# when a recipe runs, i.e. after the venv exists.
BLENDER_EXT = $(firstword $(wildcard $(VENV)/lib/python3*/site-packages/bpy/*/scripts/addons_core/bl_pkg/cli/blender_ext.py))
# The tag list `blender --command extension build` validates against.
BLENDER_TAGS = $(dir $(BLENDER_EXT))../../../modules/_bpy_internal/extensions/tags.py
EXT_ID := $(shell sed -n 's/^id *= *"\(.*\)"/\1/p' blender_manifest.toml)
EXT_VERSION := $(shell sed -n 's/^version *= *"\(.*\)"/\1/p' blender_manifest.toml)
EXT_ZIP := dist/$(EXT_ID)-$(EXT_VERSION).zip
# Blender (the bpy module) run by `make demo` keeps its user profile here, as the
# tests keep theirs in a temporary folder: the user's own settings and extensions
# are neither read nor written.
PROFILE := $(CURDIR)/build/blender-profile
BLENDER_ENV := BLENDER_USER_RESOURCES=$(PROFILE) BLENDER_USER_CONFIG=$(PROFILE)/config \
	BLENDER_USER_SCRIPTS=$(PROFILE)/scripts BLENDER_USER_DATAFILES=$(PROFILE)/datafiles \
	BLENDER_USER_EXTENSIONS=$(PROFILE)/extensions

.PHONY: demo test test-core test-blender bench zip clean

$(STAMP): requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

# The demo clips as NLA strips, synthesized and baked: out/demo.blend, out/demo.bvh, the plan.
# (`python -m core demo` still analyses the demo clips without Blender.)
demo: $(STAMP)
	$(BLENDER_ENV) $(PY) -m addon.demo --out out

test: $(STAMP)
	$(PY) -m pytest -q tests

test-core: $(STAMP)
	$(PY) -m pytest -q tests/core

test-blender: $(STAMP)
	$(PY) -m pytest -q tests/blender

bench: $(STAMP)
	$(PY) tests/bench/analysis.py
	$(PY) tests/bench/quality.py
	$(PY) tests/bench/synthesis_speed.py
	$(PY) tests/bench/bake.py
	$(PY) tests/bench/fuzz.py
	$(PY) tests/bench/reliability.py

zip: $(STAMP)
	@test -n "$(BLENDER_EXT)" || { echo "blender_ext.py not found inside the bpy module in $(VENV)" >&2; exit 1; }
	@mkdir -p dist
	$(PY) $(BLENDER_EXT) build --source-dir . --output-dir dist --valid-tags $(BLENDER_TAGS)
	$(PY) $(BLENDER_EXT) validate --valid-tags $(BLENDER_TAGS) $(EXT_ZIP)

clean:
	rm -rf $(VENV) out build dist .pytest_cache
