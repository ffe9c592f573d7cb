# make book:  build the executed book into _build/html (creates .venv if needed).
# make check: the package's unit tests, without building the book (the quick path).
# make test:  every test: the package, the built book, then the browser.
# make fresh: throw the execution cache away and build again, executing every page.
# make serve: serve the built book on http://127.0.0.1:8000/attention-book/ for reading.
# make dist:  the whole site as _build/attention-book-html.zip, to read from disk (file://).
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
DIST   := _build/attention-book-html.zip
JOBS   := $(shell nproc 2>/dev/null || echo 1)
SOURCES := _config.yml _toc.yml $(shell find book code -type f \( -name '*.md' -o -name '*.py' -o -name '*.toml' -o -name '*.bib' -o -name '*.po' -o -name '*.html' -o -name '*.css' -o -name '*.yml' \) -not -path '*/__pycache__/*')

.PHONY: book check test fresh serve venv clean dist
.DELETE_ON_ERROR:

book: $(HTML)

check: $(STAMP)
	$(BIN)/python -m pytest -m "not book and not browser and not build" -n $(JOBS) --dist loadgroup

test: $(HTML) $(DIST)
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

dist: $(DIST)

# Every file of the site under attention-book/ (source maps and the zip itself left out).
# A copy goes next to the site, so the preface's link to it works in _build/html as it
# does on GitHub Pages, which publishes _build/html.
define ZIP_SITE
import pathlib, zipfile
site = pathlib.Path("_build/html")
with zipfile.ZipFile("$(DIST)", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix != ".map" and path.name not in {"$(notdir $(DIST))", ".buildinfo"}:
            zf.write(path, pathlib.Path("attention-book", path.relative_to(site)))
endef
export ZIP_SITE

$(DIST): $(HTML)
	$(BIN)/python -c "$$ZIP_SITE"
	cp $@ _build/html/

clean:
	rm -rf _build
