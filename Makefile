# make book:  build the executed book into _build/html (creates .venv if needed).
# make check: the package's unit tests but the slow ones, without building the book
#             (the quick path; make test runs the slow ones too).
# make test:  every test: make wheel-test, then the built book, the browser and the PDF.
# make wheel-test: build the wheel and sdist, install the wheel in a clean venv outside
#             the checkout, and run there the package's unit tests and every notebook
#             the site offers for download (whose markdown must need no MyST).
# make fresh: throw the execution cache away and build again, executing every page.
# make serve: serve the built book on http://127.0.0.1:8000/attention-book/ for reading.
# make pdf:   print the built book (no page runs again) into _build/pdf/attention-book.pdf.
# make dist:  the whole site as _build/attention-book-html.zip, to read from disk (file://).
# make page SECTION=N: manuscript/N-*.txt -> its section page, listed in _toc.yml (tools/page);
#             SYNC=1 when the author revised a manuscript whose page exists.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HTML   := _build/html/index.html
PDF    := _build/pdf/attention-book.pdf
PIP    := pip==24.3.1
# uv installs the pinned wheels in parallel and, for the second venv, links them from its
# cache instead of unpacking TensorFlow again (book venv, empty caches: pip 115 s, uv 49 s).
UV     := uv==0.13.9
DIST   := _build/dist
SITE_ZIP := _build/attention-book-html.zip
# Recreated on every run, outside the checkout; the shell expands TMPDIR. Named after the
# checkout, so two checkouts on one machine never rebuild each other's venv mid-run.
WHEEL_VENV := $${TMPDIR:-/tmp}/attnbook-wheel-venv-$(shell printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)
JOBS   := $(shell nproc 2>/dev/null || echo 1)
# The package's unit tests: the tests that need no build, no browser and no PDF (the
# markers of pytest.ini). Every -m expression below is made from this one.
UNIT_TESTS := not book and not browser and not build and not pdf
SOURCES := _config.yml _toc.yml $(wildcard manuscript/*.txt) $(shell find book code -type f \( -name '*.md' -o -name '*.py' -o -name '*.toml' -o -name '*.bib' -o -name '*.po' -o -name '*.html' -o -name '*.css' -o -name '*.js' -o -name '*.yml' \) -not -path '*/__pycache__/*')

.PHONY: book check test wheel-test fresh serve venv clean pdf dist page
.DELETE_ON_ERROR:

book: $(HTML)

check: $(STAMP)
	$(BIN)/python -m pytest -m "$(UNIT_TESTS) and not slow" -n $(JOBS) --dist loadgroup

# The unit tests run once, in wheel-test against the installed wheel; the book venv
# runs the tests that need the build, Jupyter Book or the PDF.
test: wheel-test $(PDF) $(SITE_ZIP)
	$(BIN)/python -m pytest -m "not ($(UNIT_TESTS)) and not notebooks" -n $(JOBS) --dist loadgroup

# The wheel gets exactly the versions of requirements.txt (minus the editable package)
# as constraints; the tests import it from the venv's site-packages (a test checks).
# The book venv's uv fills the new venv from its cache (links, not copies), without
# bytecode: the tests' imports write the bytecode of only what runs.
# WHEEL_TEST_NEEDS: pytest, the notebook runner, and what the unit tests import
# (beautifulsoup4 and pypdf because pytest imports every test module, the deselected ones too).
WHEEL_TEST_NEEDS := pytest pytest-xdist hypothesis nbclient ipykernel beautifulsoup4 \
                    sphinx myst-nb sphinx-external-toc pyyaml latex2mathml pypdf
wheel-test: $(HTML)
	rm -rf $(DIST) "$(WHEEL_VENV)"
	$(BIN)/python -m build --no-isolation --outdir $(DIST) code/
	$(PYTHON) -m venv --without-pip "$(WHEEL_VENV)"
	grep -v '^-e' requirements.txt > "$(WHEEL_VENV)/constraints.txt"
	$(BIN)/uv pip install --quiet --python "$(WHEEL_VENV)/bin/python" \
	  --constraint "$(WHEEL_VENV)/constraints.txt" $(PIP) "$$(ls $(DIST)/attnbook-*.whl)[cpu]" \
	  $(WHEEL_TEST_NEEDS)
	"$(WHEEL_VENV)/bin/python" -m pip check
	cd "$(WHEEL_VENV)" && env -u PYTHONPATH -u PYTHONDONTWRITEBYTECODE ATTNBOOK_WHEEL_VENV="$(WHEEL_VENV)" \
	  bin/python -m pytest -c "$(CURDIR)/pytest.ini" --rootdir "$(CURDIR)" -p no:cacheprovider \
	  -m "$(UNIT_TESTS) or notebooks" -n $(JOBS) --dist loadgroup \
	  "$(CURDIR)/tests"

page: $(STAMP)
	@test -n "$(SECTION)" || { echo "用法：make page SECTION=N（例如 SECTION=4.6；原稿修订后加 SYNC=1）" >&2; exit 2; }
	$(BIN)/python -m tools.page $(SECTION) $(if $(SYNC),--sync)

fresh: $(STAMP)
	rm -rf _build
	$(MAKE) book

serve: $(HTML)
	$(BIN)/python tools/serve.py --port 8000

venv: $(STAMP)

$(STAMP): requirements.txt code/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade $(PIP) $(UV)
	$(BIN)/uv pip install --quiet --python $(BIN)/python --compile-bytecode -r requirements.txt
	$(BIN)/python -m pip check
	touch $@

# --all: every page is read again, so no incremental build hides a warning; pages whose
# code and package are unchanged come from the execution cache (book/_ext/reading/execution.py).
# -W -n --keep-going: every warning and every broken reference fails the build, and all
# of them are reported at once.
# The PDF and the zip in _build/html were made from the last build: a new build removes
# them, so the site never offers another build's numbers (make pdf and make dist, both
# run by make test, make them again).
$(HTML): $(STAMP) $(SOURCES)
	rm -f _build/html/$(notdir $(PDF)) _build/html/$(notdir $(SITE_ZIP))
	$(BIN)/jupyter-book build . --all -W -n --keep-going
	test -f $@ && touch $@

pdf: $(PDF)

# Printed by headless Chromium from _build/html (tools/pdf.py, tools/pdfbook/); it also
# copies the PDF into _build/html, where the download menu links to it.
$(PDF): $(HTML) tools/pdf.py $(wildcard tools/pdfbook/*)
	$(BIN)/python -m tools.pdf

dist: $(SITE_ZIP)

# Every file of the site under attention-book/ (source maps and the zip itself left out).
# A copy goes next to the site, so the preface's link to it works in _build/html as it
# does on GitHub Pages, which publishes _build/html.
define ZIP_SITE
import pathlib, zipfile
site = pathlib.Path("_build/html")
with zipfile.ZipFile("$(SITE_ZIP)", "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
    for path in sorted(site.rglob("*")):
        if path.is_file() and path.suffix != ".map" and path.name not in {"$(notdir $(SITE_ZIP))", ".buildinfo"}:
            zf.write(path, pathlib.Path("attention-book", path.relative_to(site)))
endef
export ZIP_SITE

# The PDF goes in too: the download menu of every page links to it.
$(SITE_ZIP): $(HTML) $(PDF)
	$(BIN)/python -c "$$ZIP_SITE"
	cp $@ _build/html/

clean:
	rm -rf _build
