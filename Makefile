# make book:  build the executed book into _build/html (creates .venv if needed).
# make check: the package's unit tests, without building the book (the quick path).
# make test:  every test: the package, the built book, then the browser.
# make fresh: throw the execution cache away and build again, executing every page.
# make serve: serve the built book on http://127.0.0.1:8000/attention-book/ for reading.
# make pdf:   print the built book (no page runs again) into _build/pdf/attention-book.pdf.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
PDF    := _build/pdf/attention-book.pdf
JOBS   := $(shell nproc 2>/dev/null || echo 1)
SOURCES := _config.yml _toc.yml $(shell find book code -type f \( -name '*.md' -o -name '*.py' -o -name '*.toml' -o -name '*.bib' -o -name '*.po' -o -name '*.html' -o -name '*.css' -o -name '*.yml' \) -not -path '*/__pycache__/*')

.PHONY: book check test fresh serve venv clean pdf
.DELETE_ON_ERROR:

book: $(HTML)

check: $(STAMP)
	$(BIN)/python -m pytest -m "not book and not browser and not build and not pdf" -n $(JOBS) --dist loadgroup

test: $(HTML) $(PDF)
	$(BIN)/python -m pytest -n $(JOBS) --dist loadgroup

fresh: $(STAMP)
	rm -rf _build
	$(MAKE) book

serve: $(HTML)
	$(BIN)/python tools/serve.py --port 8000

venv: $(STAMP)

$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip==24.3.1
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip check
	touch $@

# --all: every page is read again, so no incremental build hides a warning; pages whose
# code and package are unchanged come from the execution cache (book/_ext/execution.py).
# -W -n --keep-going: every warning and every broken reference fails the build, and all
# of them are reported at once.
$(HTML): $(STAMP) $(SOURCES)
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	test -f $@ && touch $@

pdf: $(PDF)

# Printed by headless Chromium from _build/html (tools/pdf.py, tools/pdfbook/); it also
# copies the PDF into _build/html, where the download menu links to it.
$(PDF): $(HTML) tools/pdf.py $(wildcard tools/pdfbook/*)
	$(BIN)/python tools/pdf.py

clean:
	rm -rf _build
