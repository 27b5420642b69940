# BubbleKit: `make demo` and `make test` do all the set-up on a fresh Debian machine.
SHELL := /bin/bash
SWIFT ?= swift
export FONTCONFIG_FILE := $(CURDIR)/Sources/BubbleText/Fonts/fonts.conf
OUT ?= out/demo

.PHONY: bootstrap build demo serve test examples docs bench fuzz clean format

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build

# The demo builds `bubbles` without the `Server` trait (no store, no server: no SwiftNIO,
# Hummingbird, postgres-nio or swift-crypto), so the first picture comes in minutes.
demo:
	@scripts/bootstrap.sh demo
	$(SWIFT) build -c release --product bubbles --disable-default-traits
	$$($(SWIFT) build -c release --show-bin-path)/bubbles demo -o $(OUT)

# The bundled sample conversations imported into a store of their own and served on
# http://127.0.0.1:$(PORT)/ (Ctrl-C stops it; importing again adds nothing).
PORT ?= 8080
serve: bootstrap
	$(SWIFT) build -c release --product bubbles
	mkdir -p out/serve
	$$($(SWIFT) build -c release --show-bin-path)/bubbles import Sources/BubbleCore/Samples/demo.json Sources/BubbleCore/Samples/features.json --db out/serve/samples.sqlite
	$$($(SWIFT) build -c release --show-bin-path)/bubbles serve --db out/serve/samples.sqlite --port $(PORT)

# Tests that need PostgreSQL start their own (TestPostgres); the clean-up stops one a crashed
# test process left behind, whether the tests passed or not. The lean `bubbles` of `make demo`
# (no `Server` trait) is built first, in a folder of its own, so a change that breaks it fails here.
# The store's own tests run in a process of their own: the async store's tasks need Swift's
# cooperative threads (one per core), and the CLI tests block theirs while they wait for their
# `bubbles` processes — together, a feed could wait minutes for a thread.
# scripts/run-tests.sh runs each with a watchdog (TEST_TIME_LIMIT): a hung test fails the run
# with the tests still running and every thread's stack instead of stalling CI.
# The tests that measure and draw text in the test process itself run in parallel again: two of
# them side by side once crashed inside FreeType — cairo 1.16 closing a face another thread was
# using — which `FontFacePins` prevents (the stress loop that found it ran clean 30 times after,
# and the parallel runs since). One at a time they took ~50 s longer, which CI's 15 minutes no
# longer have. The command-line tests run `bubbles` in processes of their own.
# The lean build goes into `.build` itself on a fresh checkout (CI): the packages both builds
# need (GRDB, swift-argument-parser, ZIPFoundation) are then compiled once, ~70 s less; the full
# build after it compiles only BubbleKit's own modules again. Where `.build` exists already it
# goes into `.build-lean`, so neither build undoes the other's work on the next `make test`.
LEAN_SCRATCH := $(if $(wildcard .build),.build-lean,.build)
# The examples (scripts/run-examples.sh) likewise build in `.build` after the tests on a fresh
# checkout (nothing builds after them there), else in `.build-examples`.
EXAMPLES_SCRATCH := $(if $(wildcard .build),.build-examples,.build)
IN_PROCESS_TESTS = BubbleCoreTests|BubbleTextTests|BubbleHTMLTests|BubbleRenderTests|BubbleImportTests
# The web app's JavaScript is checked first (syntax, types, its unit tests: seconds), so a slip
# in a module fails before anything is built or a browser starts.
test: bootstrap
	@rm -f .build-times
	scripts/timed.sh "web checks" scripts/check-web.sh
	scripts/timed.sh "swift format lint" $(SWIFT) format lint --strict --recursive Sources Tests Package.swift
	scripts/timed.sh "function length" scripts/check-function-length.py
	scripts/timed.sh "module boundaries" scripts/check-boundaries.sh
	scripts/timed.sh "doc snippets" scripts/check-doc-snippets.py
	scripts/timed.sh "lean build" $(SWIFT) build --product bubbles --disable-default-traits --scratch-path $(LEAN_SCRATCH)
	scripts/timed.sh "full debug build" $(SWIFT) build --build-tests
	scripts/timed.sh "doc commands" scripts/check-doc-commands.py --bubbles "$$($(SWIFT) build --show-bin-path)/bubbles"
	scripts/timed.sh "store and server tests" scripts/run-tests.sh --filter 'BubbleStoreTests|BubbleServerTests'; status=$$?; \
	  scripts/timed.sh "in-process tests" scripts/run-tests.sh --filter '$(IN_PROCESS_TESTS)' || status=1; \
	  scripts/timed.sh "command-line and browser tests" scripts/run-tests.sh --skip 'BubbleStoreTests|BubbleServerTests|$(IN_PROCESS_TESTS)' || status=1; \
	  scripts/test-postgres-cleanup.sh; \
	  EXAMPLES_SCRATCH=$(EXAMPLES_SCRATCH) scripts/timed.sh "examples" scripts/run-examples.sh || status=1; \
	  scripts/timed.sh "API check" scripts/api-check.sh || status=1; \
	  scripts/timed.sh --report; exit $$status

# `swift format` (the toolchain's) with the checked-in .swift-format: 4 spaces, 160 columns,
# layout only (no rule renames or restructures code). `make test` fails on any difference.
# Examples/ keep their own layout: the DocC articles quote them line for line.
format:
	$(SWIFT) format format --in-place --recursive Sources Tests Package.swift

# The example packages (Examples/) depend on BubbleKit by path, as a user's package does; built
# and run by `make test` (scripts/run-examples.sh checks what they print and write).
examples: bootstrap
	scripts/run-examples.sh

# DocC: every product's documentation as one static site in out/docs, with warnings as errors
# and every public symbol documented (scripts/make-docs.sh).
docs: bootstrap
	scripts/make-docs.sh

bench: bootstrap
	$(SWIFT) build -c release --product BubbleBench
	$(SWIFT) build -c release --product bubbles
	$$($(SWIFT) build -c release --show-bin-path)/BubbleBench $(BENCH_ARGS)

# Every reader under libFuzzer, FUZZ_SECONDS each (default 60): scripts/fuzz.sh.
FUZZ_SECONDS ?= 60
# Then the wrap property sweep at ten times `make test`'s size (20,000 generated messages × 6
# widths × 2 engines, checked on the scene and in the PDF).
fuzz: bootstrap
	scripts/fuzz.sh $(FUZZ_SECONDS)
	$(SWIFT) build --build-tests
	BUBBLEKIT_SWEEP=20000 scripts/run-tests.sh --filter WrapPropertyTests

clean:
	rm -rf .build .build-fuzz .build-lean .build-examples out
