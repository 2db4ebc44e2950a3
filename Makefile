# Smart Motion — the README's two commands, `make demo` and `make test`, are all the set-up.
# The virtual environments are created on first use from the pinned requirements.

# $(call find_python,X.Y): the first python X.Y that runs and says it is X.Y: pythonX.Y
# on PATH, else one of pyenv's versions, found by glob. A pyenv shim on PATH for a
# version pyenv has not selected fails to run, so it is passed over.
find_python = $(shell for p in python$(1) $$(pyenv root 2>/dev/null)/versions/$(1)*/bin/python$(1) \
	$${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(1)*/bin/python$(1); do \
	test "$$("$$p" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" = $(1) \
	&& { command -v "$$p"; break; }; done)
# $(call need_python,X.Y,INTERPRETER,WHAT): stop, naming what to install, when INTERPRETER is empty.
need_python = test -n "$(2)" || { echo "$(3) needs Python $(1): no python$(1) runs, on PATH or under pyenv \
	($${PYENV_ROOT:-$$HOME/.pyenv}/versions/$(1)*). Install it (pyenv install $(1), or your system's \
	python$(1) package) or name it: make PYTHON$(1)=/path/to/python$(1)" >&2; exit 1; }

# bpy on PyPI is built for one CPython each: 4.5 and 5.0 for 3.11, 5.2 for 3.13.
# Each is looked for once, when first needed.
PYTHON3.11 ?= $(eval PYTHON3.11 := $(call find_python,3.11))$(PYTHON3.11)
PYTHON3.13 ?= $(eval PYTHON3.13 := $(call find_python,3.13))$(PYTHON3.13)
PYTHON ?= $(PYTHON3.11)

# Blender 5.0 lives in .venv with everything the command line needs (requirements.txt).
# Each other Blender tested lives in .venv-X.Y (requirements-blender-X.Y.txt), made with
# the Python its bpy is built for; `make test` runs the Blender tests in every one.
OTHER_BLENDERS := 4.5 5.2
BLENDER_PYTHON_4.5 := 3.11
BLENDER_PYTHON_5.2 := 3.13

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

.PHONY: demo pictures test test-5.0 $(addprefix test-,$(OTHER_BLENDERS)) test-core test-blender pythons bench zip clean

$(STAMP): requirements.txt
	@test -x $(PY) || { $(call need_python,3.11,$(PYTHON),Blender 5.0 (bpy in $(VENV))) && $(PYTHON) -m venv $(VENV); }
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $(STAMP)

.venv-%/.installed: requirements-blender-%.txt
	@test -x .venv-$*/bin/python || { \
	$(call need_python,$(BLENDER_PYTHON_$*),$(PYTHON$(BLENDER_PYTHON_$*)),Blender $* (bpy in .venv-$*)) \
	&& $(PYTHON$(BLENDER_PYTHON_$*)) -m venv .venv-$*; }
	.venv-$*/bin/python -m pip install --quiet --disable-pip-version-check -r $<
	@touch $@

# The interpreter each virtual environment is made with, or what to install.
pythons:
	@$(call need_python,3.11,$(PYTHON),Blender 5.0 (bpy in $(VENV))) && echo "5.0 $(PYTHON)"
	@$(foreach v,$(OTHER_BLENDERS),$(call need_python,$(BLENDER_PYTHON_$(v)),$(PYTHON$(BLENDER_PYTHON_$(v))),Blender $(v) (bpy in .venv-$(v))) \
	&& echo "$(v) $(PYTHON$(BLENDER_PYTHON_$(v)))";)

# The demo clips as NLA strips, synthesized and baked: out/demo.blend, out/demo.bvh, the plan,
# and its pictures: out/demo_contact_sheet.png (rendered by Blender) and out/demo_speed.png.
# (`python -m core demo` still analyses the demo clips without Blender.)
demo: $(STAMP)
	$(BLENDER_ENV) $(PY) addon/demo.py --out out

# The demo again, its pictures also copied to docs/images, where the README shows them.
pictures: $(STAMP)
	$(BLENDER_ENV) $(PY) addon/demo.py --out out --pictures docs/images

# Every test on Blender 5.0 and numpy 1, the Blender tests on 4.5, every test again on
# Blender 5.2 and numpy 2.
test: test-5.0 $(addprefix test-,$(OTHER_BLENDERS))

test-5.0: $(STAMP)
	@echo "== Blender 5.0, numpy 1 ($(VENV)): tests"
	$(PY) -m pytest -q tests

test-4.5: .venv-4.5/.installed
	@echo "== Blender 4.5 LTS (.venv-4.5): tests/blender"
	.venv-4.5/bin/python -m pytest -q tests/blender

test-5.2: .venv-5.2/.installed
	@echo "== Blender 5.2 LTS, numpy 2 (.venv-5.2): tests"
	.venv-5.2/bin/python -m pytest -q tests

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
	$(PY) tests/bench/asap.py
	$(PY) tests/bench/live.py
	$(PY) tests/bench/perform.py
	$(PY) tests/bench/hops_quality.py
	$(PY) tests/bench/hops_scaling.py
	$(PY) tests/bench/insert_hop_blender.py
	$(PY) tests/bench/demo_pictures.py

zip: $(STAMP)
	@test -n "$(BLENDER_EXT)" || { echo "blender_ext.py not found inside the bpy module in $(VENV)" >&2; exit 1; }
	@mkdir -p dist
	$(PY) $(BLENDER_EXT) build --source-dir . --output-dir dist --valid-tags $(BLENDER_TAGS)
	$(PY) $(BLENDER_EXT) validate --valid-tags $(BLENDER_TAGS) $(EXT_ZIP)

clean:
	rm -rf $(VENV) $(addprefix .venv-,$(OTHER_BLENDERS)) out build dist .pytest_cache
