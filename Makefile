# pegasos: set-up, demo, tests and benchmarks.  Every target creates what it
# needs (a virtual environment in .venv with the package compiled from source).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PEGASOS_DATA ?= ../shared/data
export PEGASOS_DATA

SOURCES := pyproject.toml setup.py $(wildcard csrc/*.pyx csrc/*.pxi csrc/*.pxd csrc/*.h)

.PHONY: install demo test docs bench experiments experiments-quick clean FORCE

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Editable install: the Cython sources are compiled into pegasos/ in place.  Strict mode
# (setuptools' editable_mode=strict): Python finds the package through a plain .pth line to a tree
# of links to pegasos/'s files (build/__editable__.pegasos-*), not through the import hook of the
# default mode, which every start of Python in .venv would import (with pathlib and
# importlib.util).  A module added or removed needs a new link tree: $(VENV)/modules, the list of
# the package's modules, changes only then (its recipe rewrites it only when the list differs).
# Without the test extras; `make test` adds them (pyproject's [test]) without
# rebuilding, from the requirements the installed package declares.
$(VENV)/.installed: $(VENV)/bin/activate $(SOURCES) $(VENV)/modules
	$(PY) -m pip install --quiet -e . --config-settings editable_mode=strict
	touch $@

MODULES := $(sort $(wildcard pegasos/*.py pegasos/cli/*.py))
$(VENV)/modules: FORCE | $(VENV)/bin/activate
	@echo '$(MODULES)' | cmp -s - $@ || echo '$(MODULES)' > $@
FORCE:

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -c 'from importlib.metadata import requires; print("\n".join(r.split(";")[0] for r in requires("pegasos") if "extra == \"test\"" in r))' > $(VENV)/test-requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/test-requirements.txt
	touch $@

# The manual's tools (pyproject's [docs]), added the same way.
$(VENV)/.installed-docs: $(VENV)/.installed
	$(PY) -c 'from importlib.metadata import requires; print("\n".join(r.split(";")[0] for r in requires("pegasos") if "extra == \"docs\"" in r))' > $(VENV)/docs-requirements.txt
	$(PY) -m pip install --quiet -r $(VENV)/docs-requirements.txt
	touch $@

# The package's byte code, written even where PYTHONDONTWRITEBYTECODE is set: without it an
# editable install compiles pegasos' modules at every start of the command (0.1 s of a 0.5 s
# `pegasos train` on heart_scale here).  Only changed modules are compiled again.  Both places
# the modules are imported from: pegasos/ (Python started in this directory) and the link tree
# (the command).
BYTECODE = PYTHONDONTWRITEBYTECODE= $(PY) -m compileall -q pegasos $(wildcard build/__editable__.pegasos-*)

install: $(VENV)/.installed
	@$(BYTECODE)

# The demo trains on a9a and evaluates on a9a.t: from $(PEGASOS_DATA) when they
# are there, else downloaded into $(DEMO_CACHE) (checked, short timeout), else
# on a synthetic sparse train/test set of the same kind, so that it runs anywhere.
DEMO_CACHE ?= data-cache
DEMO_TRAIN ?= -l 1e-4

demo: install
	@set -e; mkdir -p demo-out "$(DEMO_CACHE)"; \
	if [ -f "$(PEGASOS_DATA)/a9a/a9a" ] && [ -f "$(PEGASOS_DATA)/a9a/a9a.t" ]; then \
	    name=a9a; train="$(PEGASOS_DATA)/a9a/a9a"; test="$(PEGASOS_DATA)/a9a/a9a.t"; \
	elif $(PY) data_scripts/get_data.py --dir "$(DEMO_CACHE)" --timeout 10 -q a9a a9a.t \
	        > "$(DEMO_CACHE)/get_data.log" 2>&1; then \
	    name=a9a; train="$(DEMO_CACHE)/a9a/a9a"; test="$(DEMO_CACHE)/a9a/a9a.t"; \
	    echo "a9a and a9a.t from $(DEMO_CACHE)/a9a (downloaded there, or found from an earlier run, and checked by data_scripts/get_data.py)"; \
	else \
	    name=synthetic; train="$(DEMO_CACHE)/synthetic/train.svm"; test="$(DEMO_CACHE)/synthetic/test.svm"; \
	    echo "a9a is not under PEGASOS_DATA=$(PEGASOS_DATA) and could not be downloaded and checked (see $(DEMO_CACHE)/get_data.log): using a synthetic sparse binary set (data_scripts/make_synthetic.py, 32000 train + 16000 test examples, 1000 features)"; \
	    if [ ! -f "$$test" ]; then \
	        mkdir -p "$(DEMO_CACHE)/synthetic"; \
	        $(PY) data_scripts/make_synthetic.py -q --rows 48000 --features 1000 --nnz-per-row 20 \
	            --seed 1 "$(DEMO_CACHE)/synthetic/all.svm"; \
	        head -n 32000 "$(DEMO_CACHE)/synthetic/all.svm" > "$$train.tmp"; \
	        tail -n +32001 "$(DEMO_CACHE)/synthetic/all.svm" > "$$test.tmp"; \
	        rm "$(DEMO_CACHE)/synthetic/all.svm"; mv "$$train.tmp" "$$train"; mv "$$test.tmp" "$$test"; \
	    fi; \
	fi; \
	model="demo-out/$$name.model"; \
	echo "$(VENV)/bin/pegasos train $(DEMO_TRAIN) $$train $$model"; \
	$(VENV)/bin/pegasos train $(DEMO_TRAIN) "$$train" "$$model"; \
	echo "$(VENV)/bin/pegasos eval $$test $$model"; \
	$(VENV)/bin/pegasos eval "$$test" "$$model"; \
	echo "$(VENV)/bin/pegasos objective $$train $$model"; \
	$(VENV)/bin/pegasos objective "$$train" "$$model"; \
	if [ "$$name" = a9a ]; then \
	    echo "reference optimum (LIBLINEAR, duality gap < 1e-8, see the data README): f* = 0.3517618027"; \
	fi; \
	echo "model written to $$model"; sed "/^weights \|^class /q" "$$model"

# mypy over the package with pyproject's [tool.mypy] settings (mypy comes with the test extras).
.PHONY: typecheck
typecheck: $(VENV)/.installed-test
	$(PY) -m mypy

test: $(VENV)/.installed-test
	@$(BYTECODE)
	$(PY) -m pytest -q tests

# The manual (mkdocs.yml, docs/) into site/; --strict turns every warning (a broken link, a
# docstring the API reference cannot parse) into a failure (not with --quiet, which hides
# them from the count: checked with mkdocs 1.6).  NO_MKDOCS_2_WARNING silences the
# theme's banner about its own future, which is not about this manual.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

bench: $(VENV)/.installed-test
	@$(BYTECODE)
	$(PY) benchmarks/run_all.py

# The paper's Sec. 7 redone (experiments/run.py): raw results, figures and the
# report under experiments/results/; the full run (3.5 min on 2 idle cores, 19 at load 10)
# also publishes the figures to experiments/figures and experiments/REPORT.md.
experiments: $(VENV)/.installed-test
	$(PY) experiments/run.py --publish

experiments-quick: $(VENV)/.installed-test
	$(PY) experiments/run.py --quick

clean:
	rm -rf build site $(VENV) demo-out $(DEMO_CACHE) experiments/results pegasos/*.so csrc/*.c *.egg-info
