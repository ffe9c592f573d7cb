# make book: build the executed book into _build/html (creates .venv if needed).
# make test: run every test (package, the built book, then the browser) against that build.
# make serve: serve the built book on http://127.0.0.1:8000/attention-book/ for reading.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
SOURCES := _config.yml _toc.yml $(shell find book code -type f \( -name '*.md' -o -name '*.py' -o -name '*.toml' -o -name '*.bib' -o -name '*.po' -o -name '*.html' \) -not -path '*/__pycache__/*')

.PHONY: book test serve venv clean
.DELETE_ON_ERROR:

book: $(HTML)

test: $(HTML)
	$(BIN)/python -m pytest

serve: $(HTML)
	$(BIN)/python tools/serve.py --port 8000

venv: $(STAMP)

$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==24.3.1
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip check
	touch $@

# --all: no incremental build hides an error; -W -n --keep-going: every warning and
# every broken reference fails the build, and all of them are reported at once.
$(HTML): $(STAMP) $(SOURCES)
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	test -f $@ && touch $@

clean:
	rm -rf _build
