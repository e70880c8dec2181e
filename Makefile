# pegasos: set-up, demo, tests and benchmarks.  Every target creates what it
# needs (a virtual environment in .venv with the package compiled from source).

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
PEGASOS_DATA ?= ../shared/data
export PEGASOS_DATA

SOURCES := pyproject.toml setup.py $(wildcard csrc/*.pyx csrc/*.pxi csrc/*.pxd csrc/*.h)

.PHONY: install demo test bench clean

$(VENV)/bin/activate:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Editable install: the Cython sources are compiled into pegasos/ in place.
$(VENV)/.installed: $(VENV)/bin/activate $(SOURCES)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

demo: install
	@test -f "$(PEGASOS_DATA)/a9a/a9a" || { echo "a9a not found under PEGASOS_DATA=$(PEGASOS_DATA) (see data_scripts/get_data.py)"; exit 1; }
	@mkdir -p demo-out
	$(VENV)/bin/pegasos train -l 1e-4 --epochs 100 --average-from 0.5 --sampling permutation \
	    "$(PEGASOS_DATA)/a9a/a9a" demo-out/a9a.model
	$(VENV)/bin/pegasos eval "$(PEGASOS_DATA)/a9a/a9a.t" demo-out/a9a.model
	$(VENV)/bin/pegasos objective "$(PEGASOS_DATA)/a9a/a9a" demo-out/a9a.model
	@echo "reference optimum (LIBLINEAR, duality gap < 1e-8, see the data README): f* = 0.3517618027"
	@echo "model written to demo-out/a9a.model"; head -20 demo-out/a9a.model

test: install
	$(PY) -m pytest -q tests

bench: install
	$(PY) benchmarks/run_all.py

clean:
	rm -rf build $(VENV) demo-out pegasos/*.so csrc/*.c *.egg-info
