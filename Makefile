# Every target creates .venv itself; nothing needs to be installed by hand first. It holds sdckit with
# every extra ([all]: server, ui, scale, tables, learn, dp) and the test tools ([dev]).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: demo test test-fast bench lint clean browser precompile

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[all,dev]'
	touch $(STAMP)

# The numba kernels compiled ahead of time into the package (python -m sdckit.precompile: every
# command run once on generated data), so that no command compiles on its first run; rebuilt when a
# kernel's source changes. docs/benchmarks.md ("The first run") says why and what it costs.
KERNEL_SOURCES := $(shell grep -rl --include='*.py' 'cache=True' src/sdckit)
COMPILED := src/sdckit/_compiled/BUILD.json

$(COMPILED): $(STAMP) $(KERNEL_SOURCES) src/sdckit/precompile.py src/sdckit/_numba.py
	$(BIN)/python -m sdckit.precompile

precompile: $(COMPILED)

demo: $(STAMP) $(COMPILED)
	mkdir -p out
	$(BIN)/python -m examples.generate --records 100000 --seed 1 --output out/example.parquet
	$(BIN)/sdckit risk combined out/example.parquet --config examples/example.yaml \
		--output out/scores.parquet --threshold 0.01 --histogram out/risk.png --summary out/summary.json

# The HTML report is checked in a real headless browser: Debian's chromium and its driver.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
		( $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver || \
		  ( $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium chromium-driver ) )

# Two processes (one per core of the CI machine), whole files to each so that a file's module-scoped
# fixtures (a Dask LocalCluster, a started server) are set up once; `pytest` alone runs serially.
# hypothesis' ci profile (tests/conftest.py) draws the same examples on every run; HYPOTHESIS_PROFILE=dev
# draws new ones. PYTHONDONTWRITEBYTECODE is emptied for the tests only: pytest then keeps the test
# modules it rewrites for its assertions, and Python the compiled sdckit modules, in __pycache__ (both
# ignored by git), so each worker's collection costs about 6 s of CPU from the second run on instead of 15.
# -p no:faker -p no:anyio: plugins of two dependencies (Faker, anyio) that no test uses, which import
# faker and trio into every process (about 0.2 s of CPU each).
PYTEST := PYTHONDONTWRITEBYTECODE= HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/python -m pytest \
	-p no:faker -p no:anyio
test: $(STAMP) $(COMPILED) browser
	$(PYTEST) -n 2 --dist loadfile

# The developers' fast lane (under 2 minutes): the same run without the tests marked browser, million,
# slow or install (pyproject.toml's markers), so no browser is needed. CI (`.ci/run`) runs `make test`.
FAST := not browser and not million and not slow and not install
test-fast: $(STAMP) $(COMPILED)
	$(PYTEST) -n 2 --dist loadfile -m "$(FAST)"

bench: $(STAMP) $(COMPILED)
	$(BIN)/python benchmarks/bench_cold.py --records 2000
	$(BIN)/python benchmarks/bench_risk.py
	$(BIN)/python benchmarks/bench_coverage.py
	$(BIN)/python benchmarks/bench_shapes.py --quick
	$(BIN)/python benchmarks/bench_generalization.py
	$(BIN)/python benchmarks/bench_risk_models.py --repeats 1
	$(BIN)/python benchmarks/bench_text_codes.py
	$(BIN)/python benchmarks/bench_local.py
	$(BIN)/python benchmarks/bench_slicing.py
	$(BIN)/python benchmarks/bench_qs.py
	$(BIN)/python benchmarks/bench_recode.py
	$(BIN)/python benchmarks/bench_sdcmicro_measures.py
	$(BIN)/python benchmarks/bench_reidentification_alpha.py
	$(BIN)/python benchmarks/bench_loglinear.py
	$(BIN)/python benchmarks/bench_suppressed_group.py
	$(BIN)/python benchmarks/bench_likeness.py
	$(BIN)/python benchmarks/bench_metric_options.py
	$(BIN)/python benchmarks/bench_presence_kmap.py
	$(BIN)/python benchmarks/bench_evaluation.py
	$(BIN)/python benchmarks/bench_report.py
	$(BIN)/python benchmarks/bench_describe.py
	$(BIN)/python benchmarks/bench_masking.py
	$(BIN)/python benchmarks/bench_microaggregation_variants.py
	$(BIN)/python benchmarks/bench_mdav_options.py
	$(BIN)/python benchmarks/bench_synthesis.py
	$(BIN)/python benchmarks/bench_attack.py
	$(BIN)/python benchmarks/bench_tables.py
	$(BIN)/python benchmarks/bench_server.py
	$(BIN)/python benchmarks/bench_ledger.py
	$(BIN)/python benchmarks/bench_ui.py
	$(BIN)/python benchmarks/bench_safepub.py --repeats 1
	$(BIN)/python benchmarks/bench_scale.py --sizes 1e6 1e7

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/ruff format --check src tests benchmarks examples
	$(BIN)/mypy

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache src/sdckit/_compiled
