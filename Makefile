# Two entry points (see README.md):
#   make demo   offline demo: venv, install, Snakemake run of config/demo.yaml, HTML report
#   make test   venv, install, ruff, the rules' formatting (snakefmt --check), the import layers check
#               (lint-imports), the whole test suite in two processes
#               (one test file per process at a time; the end-to-end workflow files start first)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORES ?= all

.PHONY: demo test report lint clean-results

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[test,h5,slurm,workflow]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --configfile config/demo.yaml
	$(BIN)/snakemake --cores $(CORES) --configfile config/demo.yaml --report results/report.html
	@echo ""
	@echo "HTML report: $(CURDIR)/results/report.html"

test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/snakefmt --check workflow Snakefile
	$(BIN)/lint-imports --no-logo --no-cache
	$(BIN)/python -m pytest -n 2 --dist loadfile

report: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --report results/report.html
	@echo "HTML report: $(CURDIR)/results/report.html"

lint: $(STAMP)
	$(BIN)/snakemake --lint

clean-results:
	rm -rf results/* data/processed .snakemake
	git checkout -- results/README.md
