# isoprof build.  `make` builds build/isoprof; `make check` (unit tests and
# the source guards, seconds, no root), `make test` (everything), `make fuzz`,
# `make demo`, `make bench`.  V=1 shows the commands; `make CC=clang` picks
# the compiler (gcc by default).
#
# Variants share this file through BUILD and SANITIZE/FUZZ:
#   build/        release build (what users run)
#   build/asan/   ASan+UBSan build used by the tests
#   build/fuzz/   clang libFuzzer targets

BUILD ?= build
SANITIZE ?=
FUZZ ?=

# CC is predefined by make (to cc): only an explicit CC=... overrides gcc.
ifeq ($(origin CC),default)
CC := gcc
endif
ifneq ($(FUZZ),)
CC := clang
endif
CLANG ?= clang
BPFTOOL ?= bpftool
PROTOC_C ?= protoc-c
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

GEN := $(BUILD)/gen
OBJ := $(BUILD)/obj

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) -fno-omit-frame-pointer -D_GNU_SOURCE \
	  -I. -I$(GEN) -MMD -MP
LDLIBS := -lbpf -lelf -lprotobuf-c -lz -liberty -ljson-c -lmicrohttpd -lcurl -lpthread -lm

ifneq ($(SANITIZE),)
CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
endif
ifneq ($(FUZZ),)
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -DISOPROF_FUZZ
LDFLAGS += -fsanitize=fuzzer,address,undefined
endif

# Library: everything but the executable's entry point, so unit tests and
# fuzz targets link the same code the tool runs.
LIB_SRCS := $(wildcard lib/*.c symbolize/*.c proto/*.c user/*/*.c)
LIB_SRCS := $(filter-out user/cmd/main.c,$(LIB_SRCS))
LIB_OBJS := $(patsubst %.c,$(OBJ)/%.o,$(LIB_SRCS)) $(OBJ)/gen/profile.pb-c.o
LIB := $(BUILD)/libisoprof.a

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(GEN)/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(GEN)/%.skel.h,$(BPF_SRCS))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
FIXTURE_SRCS := $(wildcard tests/fixtures/*.c)
FIXTURE_BINS := $(patsubst tests/fixtures/%.c,$(BUILD)/fixtures/%,$(FIXTURE_SRCS))
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzzers/%,$(FUZZ_SRCS))

.DELETE_ON_ERROR:
# Keep the BPF objects: their -MMD files name the headers the skeletons depend on.
.SECONDARY: $(BPF_OBJS)
.PHONY: all clean check test unit fixtures fuzz fuzzers demo bench setup check-deps check-deps-demo FORCE

all: $(BUILD)/isoprof

$(BUILD)/isoprof: $(OBJ)/user/cmd/main.o $(LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The web page's files are embedded by user/report/web_assets.c with .incbin, which
# -MMD cannot see: list them as prerequisites so an edit rebuilds the object.
WEB_ASSETS := user/report/web/index.html user/report/web/isoprof.css user/report/web/pprof.js \
	      user/report/web/flame.js user/report/web/app.js
$(OBJ)/user/report/web_assets.o: $(WEB_ASSETS)
$(OBJ)/user/v8/calibration.o: user/v8/calibration/calib.js

# The build's version (`isoprof --version`): git's description of the
# checkout, "unknown" outside one.  Rewritten only when it changes, so a
# commit relinks the tool without rebuilding the rest.
ISOPROF_VERSION := $(shell git describe --always --dirty --tags --abbrev=12 2>/dev/null || echo unknown)
$(GEN)/version.h: FORCE
	$(Q)mkdir -p $(GEN)
	$(Q)printf '#define ISOPROF_VERSION "%s"\n' '$(ISOPROF_VERSION)' > $@.new && \
		{ cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@; }
$(OBJ)/user/cmd/main.o: $(GEN)/version.h
FORCE:

# The pprof schema's generated header is included through proto/'s headers
# almost everywhere: every object waits for it (order-only; -MMD records the
# real dependency after the first build).  Only the sampler and the GC
# probes include the BPF skeletons, so only they wait for the BPF build.
$(OBJ)/user/capture/sampler.o $(OBJ)/user/capture/gc_probes.o $(OBJ)/user/capture/alloc_probes.o: $(SKELS)

$(OBJ)/%.o: %.c | $(GEN)/profile.pb-c.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OBJ)/gen/profile.pb-c.o: $(GEN)/profile.pb-c.c $(GEN)/profile.pb-c.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -Werror,$(CFLAGS)) -c $< -o $@

$(GEN)/profile.pb-c.c $(GEN)/profile.pb-c.h: proto/profile.proto
	$(call msg,PROTOC,$@)
	$(Q)mkdir -p $(GEN)
	$(Q)command -v $(PROTOC_C) >/dev/null || { echo "isoprof: protoc-c not found: run scripts/setup.sh (package protobuf-c-compiler)" >&2; exit 1; }
	$(Q)$(PROTOC_C) --proto_path=proto --c_out=$(GEN) proto/profile.proto

ifdef VMLINUX_H
$(GEN)/vmlinux.h: $(VMLINUX_H)
	$(Q)mkdir -p $(GEN) && cp $< $@
else
$(GEN)/vmlinux.h:
	$(call msg,BTF,$@)
	$(Q)mkdir -p $(GEN)
	$(Q)test -r $(VMLINUX_BTF) || { echo "isoprof: $(VMLINUX_BTF) missing: this kernel has no BTF; pass VMLINUX_H=path/to/vmlinux.h" >&2; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@
endif

# The headers a BPF program includes are recorded by -MMD (bpf/isoprof.h,
# *.bpf.h), as for the C objects.
$(GEN)/%.bpf.o: bpf/%.bpf.c $(GEN)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
		-I$(GEN) -Ibpf -MMD -MP -MF $@.d -c $< -o $@

$(GEN)/%.skel.h: $(GEN)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

# Unit tests (cmocka) and the programs they and the e2e tests run.
unit: $(UNIT_BINS) $(FIXTURE_BINS)
fixtures: $(FIXTURE_BINS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS) -lcmocka

# Fixtures are what isoprof profiles or reads: built without sanitizers,
# with frame pointers, so their cost profile is what the test expects.
$(BUILD)/fixtures/%: tests/fixtures/%.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)gcc -std=gnu11 -O1 -g -fno-omit-frame-pointer -fno-inline -fno-ipa-icf -Wall -Wextra -Werror \
		-o $@ $< -lpthread

# The pusher's test driver is the one fixture that runs isoprof's own code
# (user/push): it links the library, with the sanitizers of the variant.
$(BUILD)/fixtures/push_driver: tests/fixtures/push_driver.c $(LIB)
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/fuzzers/%: tests/fuzz/%.c $(LIB)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

fuzzers: $(FUZZ_BINS)

fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz FUZZ=1 fuzzers

setup:
	$(Q)bash scripts/setup.sh test

# Run setup only when a tool or library is missing, so `make test` and
# `make demo` work alone on a fresh host; the demo installs only what it
# needs (no Go, Chromium, perf or fuzzer runtime).
check-deps:
	$(Q)bash scripts/setup.sh --check-only test >/dev/null 2>&1 || bash scripts/setup.sh test
check-deps-demo:
	$(Q)bash scripts/setup.sh --check-only demo >/dev/null 2>&1 || bash scripts/setup.sh demo

# The developer loop: guards and unit tests, ASan+UBSan, no root, no BPF.
check:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 unit
	$(Q)bash tests/run.sh --check

test: check-deps
	$(Q)$(MAKE) --no-print-directory all unit
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=1 all unit
	$(Q)$(MAKE) --no-print-directory fuzz
	$(Q)bash tests/run.sh

demo: check-deps-demo
	$(Q)$(MAKE) --no-print-directory all
	$(Q)bash scripts/demo.sh

bench: check-deps
	$(Q)$(MAKE) --no-print-directory all fixtures
	$(Q)bash bench/run.sh

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj $(BUILD)/tests $(BUILD)/gen -name '*.d' 2>/dev/null)
