# ttd — build, test and benchmark. `make example` and `make test` do all the
# set-up they need on a fresh Debian machine (see README.md).

GO        ?= go
BIN       := bin/ttd
APT_PKGS  := gcc g++ binutils gdb musl-tools qemu-user gzip sqlite3 python3 coreutils strace tar chromium make bash \
            xz-utils bzip2 zstd perl lua5.4 nodejs jq systemtap-sdt-dev git findutils
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build build-fleet deps example test test-short test-race test-dap test-dap-deps vsix bench bench-broad pgo fuzz clean

all: build

# ttd is built without cgo: a static binary starts 0.5 ms sooner (no
# dynamic loader), a tenth of a short program's run under ttd.
# The commit goes into `ttd --version` (GOFLAGS may turn VCS stamping off).
COMMIT    := $(shell git rev-parse --short HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -modified)
build:
	CGO_ENABLED=0 $(GO) build -ldflags "-X main.commit=$(COMMIT)" -o $(BIN) ./cmd/ttd

# build-fleet builds ttd-fleet next to ttd: queries over many recordings on
# Apache Beam (`ttd query --runner beam`); a binary of its own, since Beam's
# Go SDK adds 150 MiB and 100 ms of initialisation.
build-fleet:
	CGO_ENABLED=0 $(GO) build -o bin/ttd-fleet ./cmd/ttd-fleet

# deps installs the tools the tests and benchmarks use, without asking.
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	$(GO) mod download

# example builds ttd, runs a C program under it, records it, replays the
# recording and asks the trace who last wrote the global `fnv`.
example: deps build
	@mkdir -p /tmp/ttd-example
	gcc -O2 -g -o /tmp/ttd-example/hello examples/hello.c -lm
	$(BIN) run /tmp/ttd-example/hello world
	rm -f /tmp/ttd-example/hello.ttd /tmp/ttd-example/hello.ttd.idx
	$(BIN) record -o /tmp/ttd-example/hello.ttd /tmp/ttd-example/hello world
	$(BIN) replay --verify /tmp/ttd-example/hello.ttd
	$(BIN) query /tmp/ttd-example/hello.ttd --find-prev-write fnv

test: deps test-dap-deps
	$(GO) vet ./...
	CI=$${CI:-} $(GO) test -timeout 45m ./...

# test-dap-deps installs the VS Code extension's test client
# (@vscode/debugadapter-testsupport) from its package-lock.json; the Go
# test TestNodeDebugClient (part of go test ./...) runs it against ttd dap.
test-dap-deps:
	cd editors/vscode && npm ci --no-audit --no-fund

# test-dap runs only the DAP tests: the Go client and VS Code's client.
test-dap: test-dap-deps
	CI=$${CI:-} $(GO) test -count=1 -v -run 'Fixture|Node|Server' ./dap/

# vsix packages the VS Code extension (editors/vscode/ttd.vsix).
vsix: test-dap-deps
	cd editors/vscode && npx vsce package --no-dependencies --allow-missing-repository --skip-license -o ttd.vsix

test-short:
	$(GO) test -short ./...

# test-race runs the packages whose goroutines share a trace (the
# reader's workers, the session's prefetch, symbols' lazy indexes) under
# the race detector. Not part of test: it takes several times as long.
test-race:
	$(GO) test -race -short -timeout 45m ./reader/ ./ttd/ ./symbols/

# bench prints, in one run, native vs ttd run vs qemu-user wall times,
# record/replay costs and trace density, then the Go benchmarks of the hot
# paths (with -benchmem: the dispatch loop allocates nothing).
bench: deps build
	$(GO) run ./bench/cmd/compare
	$(GO) test -run XXX -bench . -benchmem -benchtime 2x ./x86/ ./predict/
	$(GO) test -run XXX -bench . -benchmem ./tracefile/
	$(GO) test -run XXX -bench RecordCorpus -benchtime 1x ./cmd/ttd/
	$(GO) run ./bench/cmd/dapbench
	$(GO) run ./bench/cmd/travel -ttd $(BIN)
	$(GO) test -run XXX -bench . -benchmem ./reader/ ./ttd/

# bench-broad runs the broad benchmark of issue 24: 35 real programs and
# inputs (compressors, hashes, sort, python3, perl, lua, node, sqlite3, jq,
# Go, C++) natively, under ttd run, ttd record and qemu-user, in a tuning
# set and a check set, timed in CPU time (rusage), with geometric means.
bench-broad: deps build
	$(GO) run ./bench/cmd/broad

# pgo regenerates cmd/ttd/default.pgo from profiles of the bench workloads.
pgo: deps
	bash scripts/pgo.sh

fuzz:
	$(GO) test -run XXX -fuzz FuzzRecords -fuzztime 60s ./tracefile/

clean:
	rm -rf bin
