# One command per chore. Run from the checkout after the README's setup line, which makes .venv:
#   python3 -m venv .venv && .venv/bin/pip install -U pip && .venv/bin/pip install -e ".[all]" --group dev
# Another environment: make test PY=.venv-py313/bin/python. .ci/run calls lint and typecheck.

PY ?= .venv/bin/python

.PHONY: format lint typecheck test docs record

format:  ## rewrite the code in the project's style
	$(PY) -m ruff check --fix .
	$(PY) -m ruff format .

lint:  ## check the style, change nothing
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

typecheck:  ## mypy --strict on everything; pyright on the public API as users type it
	$(PY) -m mypy
	$(PY) -m pyright --pythonpath $(PY) tests/typing/api.py

test:  ## the README's test command
	$(PY) -m pytest

docs:  ## build the documentation site, warnings as errors, and check the built pages (the docs group)
	$(PY) -m mkdocs build --strict
	$(PY) scripts/docs.py --site site

record:  ## record a cassette from its scenario: make record SCENARIO=cassettes/openai/x.yaml
	@test -n "$(SCENARIO)" || { echo "make record SCENARIO=path/to/scenario.yaml [LIVE=1]" >&2; exit 2; }
	$(PY) scripts/record.py $(if $(LIVE),--live) $(SCENARIO)
