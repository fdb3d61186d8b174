# The project's entry points. `make demo` and `make test` are the two a newcomer needs.
SHELL := /bin/bash
GO ?= go
BIN := bin
TOOLS := $(CURDIR)/bin/tools
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.5.1
PROTO_FILES := $(shell find proto -name '*.proto' | sort)

.PHONY: build proto proto-check proto-tools test demo bench bench-scale clean golden vet charms

# jujud is built with Go's previous garbage collector: with the default one (green tea, Go 1.26) a
# 31,000-unit deploy and removal cost jujud 8 % and the agent host 9 % more CPU, the collector a
# third of jujud's CPU at that size (BENCHMARKS.md, At scale). Empty it to build with the default.
JUJUD_GOEXPERIMENT ?= nogreenteagc

# juju version --all names the commit: read from git here (empty outside a checkout), since
# go's own VCS stamping fails the build where git refuses the checkout.
GIT_COMMIT := $(shell git -c safe.directory='*' rev-parse HEAD 2>/dev/null)
GIT_TREE := $(shell [ -z "$(GIT_COMMIT)" ] || { git -c safe.directory='*' diff --quiet HEAD 2>/dev/null && echo clean || echo dirty; })
VERSION_X := -X github.com/jujuclone/juju/core/version.Commit=$(GIT_COMMIT) -X github.com/jujuclone/juju/core/version.TreeState=$(GIT_TREE)

build:
	@mkdir -p $(BIN)
	CGO_ENABLED=0 $(GO) build -buildvcs=false -trimpath -ldflags "-s -w $(VERSION_X)" -o $(BIN)/juju ./cmd/juju
	GOEXPERIMENT=$(JUJUD_GOEXPERIMENT) $(GO) build -buildvcs=false -trimpath -ldflags "$(VERSION_X)" -o $(BIN)/jujud ./cmd/jujud
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $(BIN)/jujuc ./cmd/jujuc

proto-tools:
	@mkdir -p $(TOOLS)
	@[ -x $(TOOLS)/protoc-gen-go ] && $(TOOLS)/protoc-gen-go --version | grep -q $(PROTOC_GEN_GO_VERSION) || \
		GOBIN=$(TOOLS) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@[ -x $(TOOLS)/protoc-gen-go-grpc ] && $(TOOLS)/protoc-gen-go-grpc --version | grep -q $(PROTOC_GEN_GO_GRPC_VERSION:v%=%) || \
		GOBIN=$(TOOLS) $(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)

# Regenerates api/ from proto/ (Debian's protoc, pinned plugins).
proto: proto-tools
	PATH=$(TOOLS):$$PATH protoc -I proto/juju/v1 --go_out=. --go_opt=module=github.com/jujuclone/juju \
		--go-grpc_out=. --go-grpc_opt=module=github.com/jujuclone/juju $(wildcard proto/juju/v1/*.proto)
	PATH=$(TOOLS):$$PATH protoc -I proto/juju/store/v1 --go_out=. --go_opt=module=github.com/jujuclone/juju \
		$(wildcard proto/juju/store/v1/*.proto)

# Fails when the committed generated code differs from what `make proto` writes.
proto-check: proto
	@if [ -n "$$(git status --porcelain -- api/)" ]; then git status --short -- api/; \
		echo "ERROR generated code in api/ is stale: run 'make proto' and commit it"; exit 1; fi

vet:
	$(GO) vet ./...

# The jubilant suite (e2e/jubilant_test.go) skips without the third-party folder; say so here,
# since go test shows a skipped test only with -v. (Under CI=true it fails instead.) The two
# longest packages are named first, so that go test starts them first and the short ones share
# the other slot meanwhile: in alphabetical order e2e started five minutes in.
test: proto-check vet build
	@[ -f "$${JUJU_THIRDPARTY:-../shared/thirdparty}/jubilant-1.12.0/jubilant/__init__.py" ] || \
		echo "SKIP jubilant suite (e2e TestJubilant): $${JUJU_THIRDPARTY:-../shared/thirdparty}/jubilant-1.12.0 not found (set JUJU_THIRDPARTY)"
	$(GO) test -count=1 -timeout 20m ./e2e ./controller/daemon ./...

golden:
	UPDATE_GOLDEN=1 $(GO) test ./...

demo: build
	./scripts/demo.sh

# Packs the ops charms (testdata/opscharms and jubilant's test charms) into bin/charms/, as
# charmcraft would, with ops from ../shared/thirdparty (or $$JUJU_THIRDPARTY).
charms: build
	$(GO) run ./scripts/packcharms

bench: build
	$(GO) run ./scripts/bench

# One model grown to SCALE units (a charm without hooks, a machine per unit): minutes at 10,000,
# hours at 100,000. Not part of make bench; its own section of BENCHMARKS.md. SCALE_FOR=45m
# stops growing after that long and measures what the model has.
SCALE ?= 10000
SCALE_FOR ?= 0
bench-scale: build
	$(GO) run ./scripts/bench -scale $(SCALE) -scale-for $(SCALE_FOR)

clean:
	rm -rf $(BIN)
