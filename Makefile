# ttd — build, test and benchmark. `make example` and `make test` do all the
# set-up they need on a fresh Debian machine (see README.md).

GO        ?= go
BIN       := bin/ttd
APT_PKGS  := gcc g++ musl-tools qemu-user gzip sqlite3 python3 coreutils
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build deps example test test-short bench fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/ttd

# deps installs the tools the tests and benchmarks use, without asking.
deps:
	@missing=""; for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		$(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	$(GO) mod download

# example builds ttd and runs a C program under it.
example: deps build
	@mkdir -p /tmp/ttd-example
	gcc -O2 -o /tmp/ttd-example/hello examples/hello.c -lm
	$(BIN) run /tmp/ttd-example/hello world

test: deps
	$(GO) vet ./...
	CI=$${CI:-} $(GO) test -timeout 45m ./...

test-short:
	$(GO) test -short ./...

bench: deps build
	$(GO) run ./bench/cmd/compare

fuzz:
	$(GO) test -run XXX -fuzz FuzzRecords -fuzztime 60s ./tracefile/

clean:
	rm -rf bin
