# libebm: plain GNU make.
#   make            lib/libebm.a and lib/libebm.so.X.Y.Z (+ .so.N, .so links)
#   make check      build and run the Check suites
#   make check-valgrind  the suite under valgrind memcheck
#   make examples   build the example programs into build/examples/
#   make bench      build and run the benchmarks (figures, not tests)
#   make install    PREFIX=/usr/local DESTDIR= (header, both libraries, ebm.pc)
#   make uninstall
#   make clean
# BLAS: OpenBLAS through pkg-config by default; any CBLAS with
#   make CBLAS_CFLAGS= CBLAS_LIBS=-lblas        (Debian's reference libblas-dev)

VERSION := $(shell sed -n 's/^\#define EBM_VERSION_STRING "\(.*\)"/\1/p' include/ebm.h)
ABI     := $(shell sed -n 's/^\#define EBM_ABI_VERSION \([0-9]*\)/\1/p' include/ebm.h)

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=

CC      ?= cc
CFLAGS  ?= -O2 -g
LDFLAGS ?=
CBLAS_CFLAGS ?= $(shell pkg-config --cflags openblas 2>/dev/null)
CBLAS_LIBS   ?= $(shell pkg-config --libs openblas 2>/dev/null || echo -lblas)
CHECK_CFLAGS ?= $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   ?= $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

WARN = -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
DEFS = -D_POSIX_C_SOURCE=200809L
LIB_CFLAGS = $(WARN) $(DEFS) -fPIC -fvisibility=hidden -Iinclude -Isrc $(CBLAS_CFLAGS) $(CFLAGS)
LIB_LIBS   = $(CBLAS_LIBS) -lpthread -lm

SRC  = $(wildcard src/*.c)
OBJ  = $(SRC:src/%.c=build/%.o)
SONAME   = libebm.so.$(ABI)
SOFILE   = lib/libebm.so.$(VERSION)
STATIC   = lib/libebm.a

TEST_SRC = $(wildcard tests/*.c)
TEST_BIN = build/tests/check_ebm

.PHONY: all check check-valgrind examples bench install uninstall clean symbols
all: $(STATIC) $(SOFILE) pkgconfig/ebm.pc

# Examples use only the public header; they link the static library and the
# helpers in examples/common/ (images need libpng and zlib). examples/common is
# not on the include path: its png.h would hide libpng's <png.h>.
EXAMPLES = $(patsubst examples/%.c,build/examples/%,$(wildcard examples/*.c))
EXAMPLE_COMMON = $(patsubst examples/%.c,build/examples/%.o,$(wildcard examples/common/*.c))
EXAMPLE_LIBS = -lpng -lz
examples: $(EXAMPLES)
.SECONDARY: $(EXAMPLE_COMMON)
build/examples/common/%.o: examples/common/%.c $(wildcard examples/common/*.h)
	@mkdir -p build/examples/common
	$(CC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) -c $< -o $@
build/examples/%: examples/%.c $(EXAMPLE_COMMON) include/ebm.h $(STATIC)
	@mkdir -p build/examples
	$(CC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) $(LDFLAGS) -o $@ $< $(EXAMPLE_COMMON) \
	  $(STATIC) $(EXAMPLE_LIBS) $(LIB_LIBS)

build/%.o: src/%.c src/ebm_internal.h include/ebm.h | build
	$(CC) $(LIB_CFLAGS) -c $< -o $@

build build/tests lib:
	mkdir -p $@

$(STATIC): $(OBJ) | lib
	rm -f $@
	ar rcs $@ $(OBJ)

$(SOFILE): $(OBJ) src/ebm.map | lib
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--version-script=src/ebm.map \
	  -Wl,--no-undefined $(CFLAGS) $(LDFLAGS) -o $@ $(OBJ) $(LIB_LIBS)
	ln -sf libebm.so.$(VERSION) lib/$(SONAME)
	ln -sf $(SONAME) lib/libebm.so

pkgconfig/ebm.pc: pkgconfig/ebm.pc.in include/ebm.h Makefile
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@LIBS_PRIVATE@|$(LIB_LIBS)|' $< > $@

# Tests link the static library so that they may also reach internal symbols.
$(TEST_BIN): $(TEST_SRC) tests/tests.h $(STATIC) | build/tests
	$(CC) $(WARN) $(DEFS) -Wno-missing-prototypes -Iinclude -Isrc $(CBLAS_CFLAGS) \
	  $(CHECK_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(TEST_SRC) $(STATIC) $(LIB_LIBS) $(CHECK_LIBS)

# EBM_TEST_LEVEL=2 runs the long statistical versions; CK_FORK=no suits valgrind.
check: $(TEST_BIN) $(SOFILE)
	OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} ./$(TEST_BIN)

# Benchmarks print figures (a human line and a JSON line each); they assert
# nothing about time. BENCH_THREADS sets OPENBLAS_NUM_THREADS (default 2).
BENCH_THREADS ?= 2
BENCHES = $(patsubst bench/%.c,build/bench/%,$(wildcard bench/*.c))
bench: $(BENCHES)
	@for b in $(BENCHES); do OPENBLAS_NUM_THREADS=$(BENCH_THREADS) ./$$b || exit 1; done
build/bench/%: bench/%.c include/ebm.h $(STATIC)
	@mkdir -p build/bench
	$(CC) $(WARN) $(DEFS) -Iinclude $(CBLAS_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(STATIC) $(LIB_LIBS)

# The suite in one process under memcheck: zero errors, zero definite leaks.
check-valgrind: $(TEST_BIN)
	CK_FORK=no OPENBLAS_NUM_THREADS=1 valgrind -q --error-exitcode=9 --leak-check=full \
	  --errors-for-leak-kinds=definite ./$(TEST_BIN)

# The exported symbols, one per line, to compare with tests/abi/symbols.txt.
symbols: $(SOFILE)
	nm -D --defined-only $(SOFILE) | awk '$$2 == "T" { print $$3 }' | sort

install: all
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR)
	install -m 644 include/ebm.h $(DESTDIR)$(INCLUDEDIR)/ebm.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libebm.a
	install -m 755 $(SOFILE) $(DESTDIR)$(LIBDIR)/libebm.so.$(VERSION)
	ln -sf libebm.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libebm.so
	install -m 644 pkgconfig/ebm.pc $(DESTDIR)$(PCDIR)/ebm.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/ebm.h $(DESTDIR)$(LIBDIR)/libebm.a \
	  $(DESTDIR)$(LIBDIR)/libebm.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	  $(DESTDIR)$(LIBDIR)/libebm.so $(DESTDIR)$(PCDIR)/ebm.pc

clean:
	rm -rf build lib/libebm.* pkgconfig/ebm.pc
