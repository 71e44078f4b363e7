# libebm: plain GNU make.
#   make            lib/libebm.a and lib/libebm.so.X.Y.Z (+ .so.N, .so links)
#   make check      build and run the Check suites
#   make check-valgrind  the suite under valgrind memcheck
#   make check-tsan the concurrent const calls under ThreadSanitizer (clang)
#   make fuzz       the libFuzzer targets tests/fuzz/ (clang), 10 min each;
#                   make fuzz-ci: 60 s each, as CI runs them
#   make examples   build the example programs into build/examples/
#   make check-trainers  the trainers' tests (tests/trainers/run.sh, ~1 min)
#   make examples-mpi  the data-parallel trainer build/examples/train_mpi (mpicc:
#                   OpenMPI, apt-get install openmpi-bin libopenmpi-dev)
#   make check-mpi  its tests on 1, 2 and 3 ranks (tests/mpi/run.sh, ~1 min)
#   make check-crash  the trainers killed (SIGKILL) and resumed, 50 times each
#                   (tests/crash/soak.sh, ~2 min; needs MPI as check-mpi)
#   make bench      build and run the benchmarks (figures, not tests), each
#                   beside its peer where bench/peers/ finds the peer's code
#   make bench-peers  the peers alone (bench/peers/README.md); make
#                   bench-peers-fetch clones their code (network)
#   make fingerprint  hashes of fixed-seed results (bench/fingerprint.sh): the
#                   same output before and after a refactoring shows the same bits
#   make python     install the Python package (python/, ctypes over the shared
#                   library) into the venv VENV (.venv), made if missing by
#                   PYTHON (/usr/bin/python3) with Debian's numpy and scikit-learn
#   make wheel      build/wheel/ebm-*.whl: the Python package with the library
#                   inside, for pip install --no-index into any venv with numpy
#   make check-wheel  that wheel in a fresh venv, python/tests against it
#   make check-python  make python, then python/tests under pytest in the venv
#                   (check-python-asan: against an ASan+UBSan build of the library;
#                   check-python-valgrind: the lifetime tests under memcheck)
#   make demo       train a DBM on Fashion-MNIST by UCD-LMI, then by PCD, ~12 min
#                   (DEMO_MINUTES=5 per method; docs/demo.md)
#   make results    the long runs of docs/results.md (about 2 hours; RESULTS=names)
#                   (these two and their data sets, make fashion-mnist and make
#                   mnist-data, are in examples/examples.mk)
#   make deps       install the Debian packages (build, tests, Python, examples,
#                   data) with apt-get: directly as root, else through sudo
#   make install    the header, both libraries, ebm.pc, CMake's package files
#                   (find_package(ebm): ebm::ebm, ebm::ebm_static), the trainers
#                   (ebm-train-ucd, -ucd-lmi, -pcd, -grbm) and the man pages;
#                   PREFIX=/usr/local, BINDIR LIBDIR INCLUDEDIR PCDIR CMAKEDIR
#                   MANDIR (below), DESTDIR= (e.g. PREFIX=/usr
#                   LIBDIR=/usr/lib/x86_64-linux-gnu for Debian's multiarch)
#   make uninstall  the same variables: removes what make install put there
#   make check-install  install into a temporary DESTDIR and build an outside
#                   program against it with pkg-config and with CMake, shared
#                   and static (tests/install/run.sh; needs cmake)
#   make deb        the Debian packages libebm0, libebm-dev, ebm-tools and
#                   python3-ebm (debian/) into build/deb/, by dpkg-buildpackage
#                   from a copy of the tree (needs debhelper, dh-python,
#                   python3-setuptools); tests/install/deb.sh checks them
#   make clean
# BLAS: OpenBLAS through pkg-config by default; any CBLAS with
#   make CBLAS_CFLAGS= CBLAS_LIBS=-lblas        (Debian's reference libblas-dev)
#   ebm.pc names the BLAS's pkg-config module in Requires.private when it has
#   one (CBLAS_PC, below), else puts CBLAS_LIBS in Libs.private.

VERSION := $(shell sed -n 's/^\#define EBM_VERSION_STRING "\(.*\)"/\1/p' include/ebm.h)
ABI     := $(shell sed -n 's/^\#define EBM_ABI_VERSION \([0-9]*\)/\1/p' include/ebm.h)

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(LIBDIR)/pkgconfig
CMAKEDIR   ?= $(LIBDIR)/cmake/ebm
MANDIR     ?= $(PREFIX)/share/man
DESTDIR    ?=

CC      ?= cc
CFLAGS  ?= -O2 -g
LDFLAGS ?=
CBLAS_CFLAGS ?= $(shell pkg-config --cflags openblas 2>/dev/null)
CBLAS_LIBS   ?= $(shell pkg-config --libs openblas 2>/dev/null || echo -lblas)
# The pkg-config module of the configured BLAS (ebm.pc's Requires.private):
# the first of CBLAS_PC_MODULES whose `pkg-config --libs` is CBLAS_LIBS, so
# "openblas" by default and none for CBLAS_LIBS=-lblas or a library's path
# (ebm.pc then lists CBLAS_LIBS in Libs.private). CBLAS_PC=name sets it.
CBLAS_PC_MODULES ?= openblas cblas blas
same_words = $(and $(findstring $(strip $1),$(strip $2)),$(findstring $(strip $2),$(strip $1)))
CBLAS_PC ?= $(firstword $(foreach p,$(CBLAS_PC_MODULES),\
  $(if $(call same_words,$(shell pkg-config --libs $p 2>/dev/null),$(CBLAS_LIBS)),$p)))
CHECK_CFLAGS ?= $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   ?= $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)

WARN = -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
       -Wmissing-prototypes -Wpointer-arith -Wcast-qual -Wvla -Wformat=2
DEFS = -D_POSIX_C_SOURCE=200809L
# OPENMP=-fopenmp runs the row loops of elementwise work (draws, means,
# local-search updates, coupled rows) on OpenMP threads instead of the
# library's own pool (src/threads.c); either way the thread count is
# ebm_set_num_threads' and the results do not depend on it. Meant for an
# OpenMP build of OpenBLAS (Debian: libopenblas0-openmp), whose threads are
# then the same pool (measurements: docs/performance.md, items 6, 20, 32).
OPENMP ?=
# -ffp-contract=off: the float kernels give the same bits in every build
# (scalar, AVX2, AVX-512) only if no compiler fuses a * b + c into an FMA.
LIB_CFLAGS = $(WARN) $(DEFS) $(SIMD_DEFS) -fPIC -fvisibility=hidden -Iinclude -Isrc \
             $(CBLAS_CFLAGS) $(OPENMP) $(CFLAGS) -ffp-contract=off
LIB_LIBS   = $(CBLAS_LIBS) $(OPENMP) -lpthread -lm

# The elementwise kernels (src/simd/kernels.c) are compiled once per
# instruction set; src/simd.c picks the best one the CPU runs at run time.
SIMD_X86 := $(findstring x86_64,$(shell $(CC) -dumpmachine))
SIMD_DEFS = $(if $(SIMD_X86),-DEBM_SIMD_X86)
SIMD_OBJ  = build/simd_generic.o $(if $(SIMD_X86),build/simd_avx2.o build/simd_avx512.o)
SIMD_FLAGS_generic =
SIMD_FLAGS_avx2    = -mavx2 -mpopcnt
SIMD_FLAGS_avx512  = -mavx512f -mavx512dq -mavx512vl -mavx512bw -mpopcnt -mprefer-vector-width=512

SRC  = $(wildcard src/*.c)
OBJ  = $(SRC:src/%.c=build/%.o) $(SIMD_OBJ)
SONAME   = libebm.so.$(ABI)
SOFILE   = lib/libebm.so.$(VERSION)
STATIC   = lib/libebm.a
CMAKE_FILES = build/cmake/ebmConfig.cmake build/cmake/ebmConfigVersion.cmake

TEST_SRC = $(wildcard tests/*.c)
TEST_BIN = build/tests/check_ebm

.PHONY: FORCE all check check-install deb check-deb check-valgrind check-valgrind-coverage check-trainers examples examples-mpi check-mpi check-crash bench bench-programs bench-peers bench-peers-fetch fingerprint install uninstall clean symbols deps \
  python check-python check-python-asan check-python-valgrind generated check-generated \
  wheel check-wheel
all: $(STATIC) $(SOFILE) pkgconfig/ebm.pc $(CMAKE_FILES)

# Examples use only the public header; they link the static library and the
# helpers in examples/common/ (images need libpng and zlib). examples/common is
# not on the include path: its png.h would hide libpng's <png.h>.
EXAMPLES = $(patsubst examples/%.c,build/examples/%,$(wildcard examples/*.c))
EXAMPLE_COMMON = $(patsubst examples/%.c,build/examples/%.o,$(wildcard examples/common/*.c))
EXAMPLE_LIBS = -lpng -lz
examples: $(EXAMPLES) build/examples/check_common
.SECONDARY: $(EXAMPLE_COMMON)
build/examples/common/%.o: examples/common/%.c $(wildcard examples/common/*.h)
	@mkdir -p build/examples/common
	$(CC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) -c $< -o $@
build/examples/%: examples/%.c $(EXAMPLE_COMMON) include/ebm.h $(STATIC)
	@mkdir -p build/examples
	$(CC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) $(LDFLAGS) -o $@ $< $(EXAMPLE_COMMON) \
	  $(STATIC) $(EXAMPLE_LIBS) $(LIB_LIBS)
# The unit tests of examples/common (optim_average, checkpoints), run by
# tests/trainers/run.sh: make check-trainers.
build/examples/check_common: tests/trainers/check_common.c $(EXAMPLE_COMMON) include/ebm.h $(STATIC)
	@mkdir -p build/examples
	$(CC) $(WARN) $(DEFS) -Iinclude -Iexamples $(CFLAGS) $(LDFLAGS) -o $@ $< $(EXAMPLE_COMMON) \
	  $(STATIC) $(EXAMPLE_LIBS) $(LIB_LIBS)
check-trainers: examples
	bash tests/trainers/run.sh build/examples

# The data-parallel trainer (docs/distributed.md): the trainers' common code
# and the static library, linked by MPI's compiler; libebm never links MPI.
MPICC ?= mpicc
examples-mpi: build/examples/train_mpi
build/examples/train_mpi: examples/mpi/train_mpi.c $(EXAMPLE_COMMON) include/ebm.h $(STATIC)
	@mkdir -p build/examples
	$(MPICC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) $(LDFLAGS) -o $@ $< $(EXAMPLE_COMMON) \
	  $(STATIC) $(EXAMPLE_LIBS) $(LIB_LIBS)
# tests/mpi/run.sh also runs the one-process trainers (the first step's
# meeting times on the whole batch).
check-mpi: build/examples/train_mpi build/examples/train_ucd build/examples/train_ucd_lmi
	bash tests/mpi/run.sh build/examples

# The crash-resume soak (tests/crash/soak.sh): UCD, UCD-LMI, PCD, PT, the
# MPI trainer on 2 ranks and train_grbm (with Fashion-MNIST), each killed
# CRASH_KILLS times (the MPI run CRASH_KILLS_MPI, train_grbm
# CRASH_KILLS_GRBM, by default CRASH_KILLS but at most 20), also inside
# checkpoint writes (the LD_PRELOAD shim tests/crash/kill_at.c), must end
# with the uninterrupted run's model.ebm.
# About 2 min on 2 cores; the longer run of tests/README.md: make
# check-crash CRASH_KILLS=500 CRASH_KILLS_MPI=50 CRASH_STEPS=10000.
CRASH_KILLS      ?= 50
CRASH_KILLS_MPI  ?= 10
CRASH_KILLS_GRBM ?=
CRASH_STEPS      ?= 1500
build/tests/crash/kill_at.so: tests/crash/kill_at.c
	@mkdir -p $(@D)
	$(CC) $(WARN) $(CFLAGS) -shared -fPIC -o $@ $< -ldl
check-crash: build/tests/crash/kill_at.so build/examples/train_mpi build/examples/train_ucd \
             build/examples/train_ucd_lmi build/examples/train_pcd build/examples/train_grbm
	KILLS=$(CRASH_KILLS) KILLS_MPI=$(CRASH_KILLS_MPI) STEPS_PER_RUN=$(CRASH_STEPS) \
	  $(if $(CRASH_KILLS_GRBM),KILLS_GRBM=$(CRASH_KILLS_GRBM)) \
	  bash tests/crash/soak.sh build/examples

# The demo, the long runs of docs/results.md and their data sets (demo,
# results, fashion-mnist, mnist-data; DEMO_*, RESULTS, FASHION_*).
include examples/examples.mk

# Everything `make demo` and `make check check-python` need, the data set
# (FASHION_APT, examples/examples.mk), and the tools of check-valgrind, fuzz,
# check-tsan and check-install. apt-get runs directly as root, else through sudo.
DEPS = build-essential pkg-config check libopenblas-dev zlib1g-dev libpng-dev cmake gfortran man-db \
       python3-numpy python3-venv python3-wheel python3-sklearn python3-pytest python3-cffi \
       valgrind clang libclang-rt-dev libomp-dev openmpi-bin libopenmpi-dev \
       $(FASHION_APT)
deps:
	@if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null; then sudo=sudo; \
	else echo "make deps: not root and no sudo; as root run: make deps"; exit 1; fi; \
	set -x; $$sudo apt-get install -y $(DEPS) || \
	  { $$sudo apt-get update && $$sudo apt-get install -y $(DEPS); }

# build/flags holds the flags the objects were built with; it is rewritten
# (and everything rebuilt) only when they change, e.g. OPENMP=-fopenmp or
# another CFLAGS, so that no build mixes objects of two configurations.
BUILD_FLAGS = $(CC) $(LIB_CFLAGS) $(LDFLAGS) $(LIB_LIBS)
build/flags: FORCE | build
	@[ "$$(cat $@ 2>/dev/null)" = '$(BUILD_FLAGS)' ] || printf '%s\n' '$(BUILD_FLAGS)' > $@
FORCE:

# -MMD -MP: each object's .d lists the headers it includes, so an object is
# rebuilt when one of those changes and only then.
DEPFLAGS = -MMD -MP
build/%.o: src/%.c build/flags | build
	$(CC) $(LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@

# -fno-trapping-math lets the compiler compute both sides of a select (the
# kernels' branch-free clamps) and -fno-math-errno lets sqrt be one
# instruction, so that the loops vectorise; neither changes a value, only
# which floating-point flags or errno a call may set.
build/simd_%.o: src/simd/kernels.c build/flags | build
	$(CC) $(LIB_CFLAGS) $(DEPFLAGS) -O3 -fno-trapping-math -fno-math-errno $(SIMD_FLAGS_$*) -DEBM_KERNELS=ebm__kernels_$* \
	  -DEBM_KERNELS_LABEL=$* -c $< -o $@

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

# ebm.pc: directories under PREFIX are written relative to ${prefix}. The BLAS
# is a Requires.private module when it has one (CBLAS_PC), else its flags go
# to Libs.private. build/pc-flags holds the substitutions and is rewritten
# when they change (another PREFIX, LIBDIR, BLAS or OPENMP), so that
# `make install PREFIX=/usr` after `make` installs a .pc for /usr.
quote = '$(subst ','\'',$1)'
pc_dir = $(patsubst $(PREFIX)/%,$${prefix}/%,$1)
PC_SED = -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
         -e 's|@INCLUDEDIR@|$(call pc_dir,$(INCLUDEDIR))|' -e 's|@VERSION@|$(VERSION)|' \
         -e 's|@REQUIRES_PRIVATE@|$(strip $(CBLAS_PC))|' -e '/^Requires.private: *$$/d' \
         -e 's|@LIBS_PRIVATE@|$(strip $(if $(strip $(CBLAS_PC)),,$(CBLAS_LIBS)) $(OPENMP) -lpthread -lm)|'
build/pc-flags: FORCE | build
	@[ "$$(cat $@ 2>/dev/null)" = $(call quote,$(PC_SED)) ] || printf '%s\n' $(call quote,$(PC_SED)) > $@
pkgconfig/ebm.pc: pkgconfig/ebm.pc.in build/pc-flags
	sed $(PC_SED) $< > $@

# CMake's package files (find_package(ebm CONFIG)), from cmake/*.cmake.in.
# ebmConfig.cmake finds the library and the header from its own directory
# (CMAKEDIR) by the relative paths to LIBDIR and INCLUDEDIR, so that DESTDIR
# and moved trees work; ebm::ebm_static links the BLAS flags the library is
# built with (CBLAS_LIBS), OPENMP, threads and libm. build/cmake-flags holds
# the substitutions, as build/pc-flags does for ebm.pc.
relative_path = $(shell realpath -m --relative-to='$1' '$2')
empty :=
space := $(empty) $(empty)
CMAKE_SED = -e 's|@VERSION@|$(VERSION)|g' -e 's|@ABI@|$(ABI)|g' \
            -e 's|@MAJOR@|$(firstword $(subst ., ,$(VERSION)))|' \
            -e 's|@CMAKEDIR@|$(CMAKEDIR)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
            -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
            -e 's|@CMAKE_TO_LIBDIR@|$(call relative_path,$(CMAKEDIR),$(LIBDIR))|' \
            -e 's|@CMAKE_TO_INCLUDEDIR@|$(call relative_path,$(CMAKEDIR),$(INCLUDEDIR))|' \
            -e 's|@STATIC_LIBS@|$(subst $(space),;,$(strip $(CBLAS_LIBS) $(OPENMP)))|' \
            -e 's|@SIZEOF_VOID_P@|$(shell $(CC) -dM -E -x c /dev/null | sed -n 's/^\#define __SIZEOF_POINTER__ //p')|'
build/cmake-flags: FORCE | build
	@[ "$$(cat $@ 2>/dev/null)" = $(call quote,$(CMAKE_SED)) ] || printf '%s\n' $(call quote,$(CMAKE_SED)) > $@
build/cmake/%.cmake: cmake/%.cmake.in build/cmake-flags
	@mkdir -p build/cmake
	sed $(CMAKE_SED) $< > $@

# Tests link the static library so that they may also reach internal symbols,
# and route its allocations through tests/fault.c (allocation-failure injection).
TEST_WRAP = -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc
$(TEST_BIN): $(TEST_SRC) tests/tests.h $(wildcard src/*.h) $(STATIC) build/flags | build/tests
	$(CC) $(WARN) $(DEFS) -Wno-missing-prototypes -Iinclude -Isrc $(CBLAS_CFLAGS) \
	  $(CHECK_CFLAGS) $(OPENMP) $(CFLAGS) -ffp-contract=off $(LDFLAGS) $(TEST_WRAP) -o $@ \
	  $(TEST_SRC) $(STATIC) $(LIB_LIBS) $(CHECK_LIBS)

# EBM_TEST_LEVEL=2 runs the long statistical versions; CK_FORK=no suits valgrind.
check: $(TEST_BIN) $(SOFILE)
	OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} ./$(TEST_BIN)

# Benchmarks print figures (a human line and a JSON line each); they assert
# nothing about time. bench/bench.sh runs each twice: with BENCH_THREADS
# threads (default 2; OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and
# EBM_NUM_THREADS), then with 1; where the environment sets
# OPENBLAS_CORETYPE, a third time with BENCH_THREADS threads and the
# variable unset (the CPU's own kernels). Each line names the kernel family
# OpenBLAS ran. With BENCH_PEERS=1 (the default) a program's peer
# (bench/peers/README.md) runs first, where its code is found, and the
# program prints the ratio to that run's peer. The programs link
# bench/common.c and the data helpers of examples/common, and wrap the BLAS
# calls to count their FLOPs (bench/common.h). BENCH_BAS_ITERS: iterations
# of the ucd_bas training runs.
BENCH_THREADS ?= 2
BENCH_BAS_ITERS ?= 10000
BENCH_PEERS ?= 1
BENCHES = $(patsubst bench/%.c,build/bench/%,$(filter-out bench/common.c bench/fingerprint.c,$(wildcard bench/*.c)))
BENCH_OBJ = build/bench/common.o $(addprefix build/examples/common/,data.o bas.o cli.o optim.o)
BENCH_WRAP = -Wl,--wrap=cblas_sgemm -Wl,--wrap=cblas_dgemm
bench-programs: $(BENCHES)
bench: $(BENCHES)
	@BENCH_THREADS=$(BENCH_THREADS) BENCH_BAS_ITERS=$(BENCH_BAS_ITERS) BENCH_PEERS=$(BENCH_PEERS) \
	  sh bench/bench.sh $(BENCHES)
# The peers alone (bench/peers/run.sh): their code is never in the tree;
# bench-peers-fetch clones it (network), or PEER_UNBIASED_DBM, PEER_GRBM and
# PEER_CDTAU name checkouts. A peer whose code or tools are missing prints
# "skipped: ..." and the others run.
bench-peers:
	@BENCH_THREADS=$(BENCH_THREADS) BENCH_BAS_ITERS=$(BENCH_BAS_ITERS) sh bench/peers/run.sh
bench-peers-fetch:
	sh bench/peers/fetch.sh
# make fingerprint: the hashes of the library's results on fixed seeds
# (bench/fingerprint.c: every benchmark's set-up for a few steps and every
# public computational call on small models; bench/fingerprint.sh adds the
# deterministic outputs of short bas_ucd, train_ucd_lmi and grbm_gmm runs).
# Identical output before and after a change shows that it kept the bits.
FINGERPRINT_PROGRAMS = build/bench/fingerprint build/examples/bas_ucd \
                       build/examples/train_ucd_lmi build/examples/grbm_gmm
fingerprint: $(FINGERPRINT_PROGRAMS)
	@FINGERPRINT_BUILT=1 sh bench/fingerprint.sh
build/bench/common.o: bench/common.c bench/common.h include/ebm.h
	@mkdir -p build/bench
	$(CC) $(WARN) $(DEFS) -Iinclude -Iexamples $(CBLAS_CFLAGS) $(CFLAGS) -c $< -o $@
build/bench/%: bench/%.c bench/common.h $(BENCH_OBJ) include/ebm.h $(STATIC)
	@mkdir -p build/bench
	$(CC) $(WARN) $(DEFS) -Iinclude -Iexamples $(CBLAS_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_WRAP) \
	  -o $@ $< $(BENCH_OBJ) $(STATIC) -lz $(LIB_LIBS)

# bench/compare.sh: the same programs linked against another revision's library.
build/compare/%.base: bench/%.c bench/common.h $(BENCH_OBJ) include/ebm.h build/compare/base/lib/libebm.a
	$(CC) $(WARN) $(DEFS) -Iinclude -Iexamples $(CBLAS_CFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_WRAP) \
	  -o $@ $< $(BENCH_OBJ) build/compare/base/lib/libebm.a -lz $(LIB_LIBS)

# The suite under memcheck (each worker one process): zero errors, zero
# definite leaks. On one thread of the library's (EBM_NUM_THREADS=1) and
# without the thread-count suite: memcheck serialises threads, and the test
# workers end with _exit, leaving the pool's threads to be reported as
# possibly lost (the pool runs under ASan and TSan); and without the test
# cases of VALGRIND_SKIP: the law tests, which repeat code paths that other
# test cases run, and the scan of ebm__log1pf01 over 17 million floats
# (arithmetic only). Without them the suite still executes every line of
# src/ that the whole suite does but four and the pool's workers (gcov:
# make check-valgrind-coverage, tests/valgrind_coverage.sh), which ASan+UBSan
# run. VALGRIND_SKIP= runs everything.
VALGRIND_SKIP ?= coupling:coupled_law coupling:meeting_time coupling:gaussian evaluation:ais \
                 sampler:step_law langevin:stationarity potts:ais potts:draws potts:coupling \
                 tempering:step_law tempering:gaussian estimator:unbiased estimator:variance \
                 estimator:twins simd:float_log1p
check-valgrind-coverage:
	bash tests/valgrind_coverage.sh "$(VALGRIND_SKIP)"
check-valgrind: $(TEST_BIN)
	CK_FORK=no CK_EXCLUDE_TAGS="threads $(VALGRIND_SKIP)" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
	  EBM_NUM_THREADS=1 valgrind -q --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
	  ./$(TEST_BIN)

# The Python package (python/: pyproject.toml, setup.py, ebm/). The venv sees
# the system's site-packages (--system-site-packages), so that Debian's numpy,
# scikit-learn and pytest (python3-numpy python3-sklearn python3-pytest) serve
# it without PyPI; it is an installation, and `make clean` leaves it. pip
# builds ./python in place; its setup.py copies lib/libebm.so.0 into the
# installed package (ebm/libebm.so.0), so rerun `make python` after rebuilding
# the library. The tests run from the repository root (no ebm/ there) with
# PYTHONSAFEPATH and --import-mode=append, so that they import the installed
# package, not python/ebm; EBM_REPO tells them where the header, the ABI list
# and build/examples/bas_ucd are.
PYTHON ?= $(if $(wildcard /usr/bin/python3),/usr/bin/python3,python3)
VENV   ?= .venv
PIP_BUILD_JUNK = python/build python/ebm.egg-info
python: $(SOFILE)
	@[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv --system-site-packages $(VENV)
	@rm -rf $(PIP_BUILD_JUNK)
	$(VENV)/bin/python -m pip install -q --no-build-isolation --no-index --force-reinstall \
	  --no-deps ./python
	@rm -rf $(PIP_BUILD_JUNK)
	@echo "ebm installed in $(VENV); use it with: $(VENV)/bin/python -c 'import ebm'"

PYTEST_ENV = EBM_REPO=$(CURDIR) PYTHONSAFEPATH=1 OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1}
PYTEST_ARGS = -q -p no:cacheprovider --import-mode=append
PYTEST = $(PYTEST_ENV) $(VENV)/bin/python -m pytest $(PYTEST_ARGS) python/tests
check-python: python build/examples/bas_ucd
	$(PYTEST)

# Files generated from the C sources, committed so that the package and the
# docs need no build step: python/ebm/_abi.py from include/ebm.h
# (python/tools/gen_abi.py); python/ebm/_options.py and docs/options.md from
# the option tables of src/sampler.c and src/estimator.c
# (python/tools/gen_options.py). `make generated` rewrites them after a
# change to the header or a table; `make check-generated` fails if one is
# out of date (check-python's test_abi.py and test_options.py check it too).
generated:
	$(PYTHON) python/tools/gen_abi.py
	$(PYTHON) python/tools/gen_options.py
check-generated:
	$(PYTHON) python/tools/gen_abi.py --check
	$(PYTHON) python/tools/gen_options.py --check

# make wheel: build/wheel/ebm-<version>-py3-none-<platform>.whl, the package
# with the library inside it (setup.py copies lib/libebm.so.0 into ebm/), for
# `pip install --no-index` into any Python 3 environment that has numpy.
# make check-wheel: that wheel installed into a fresh venv in a temporary
# directory (seeing the system's numpy, scikit-learn and pytest), then the
# Python tests run from there against the installed package (no EBM_LIBRARY;
# the package must load the library it carries), in WHEEL_TIMEOUT seconds.
WHEEL_DIR = build/wheel
WHEEL_TIMEOUT ?= 900
wheel: $(SOFILE)
	@rm -rf $(PIP_BUILD_JUNK) $(WHEEL_DIR)
	$(PYTHON) -m pip wheel -q --no-build-isolation --no-index --no-deps -w $(WHEEL_DIR) ./python
	@rm -rf $(PIP_BUILD_JUNK)
	@ls $(WHEEL_DIR)/*.whl
check-wheel: wheel build/examples/bas_ucd
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(PYTHON) -m venv --system-site-packages "$$tmp/venv" && \
	"$$tmp/venv/bin/python" -m pip install -q --no-index $(CURDIR)/$(WHEEL_DIR)/*.whl && \
	cd "$$tmp" && env -u EBM_LIBRARY "$$tmp/venv/bin/python" -c 'import ebm, sys; \
	  assert ebm.__file__.startswith(sys.prefix) and ebm.library_path.startswith(sys.prefix), \
	  (ebm.__file__, ebm.library_path); print("check-wheel: ebm", ebm.version(), "from", ebm.library_path)' && \
	env -u EBM_LIBRARY EBM_REPO=$(CURDIR) PYTHONSAFEPATH=1 OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} \
	  timeout $(WHEEL_TIMEOUT) "$$tmp/venv/bin/python" -m pytest $(PYTEST_ARGS) --rootdir="$$tmp" \
	  $(CURDIR)/python/tests

# make check-python-asan: the same tests against a library built with
# AddressSanitizer and UBSan (lib/ as `make all CFLAGS="... -fsanitize=address,undefined"`
# leaves it, which CI's ASan stage does first), the sanitizer runtimes
# preloaded into the interpreter, so that a lifetime bug of the binding (a
# handle used after it was freed) stops the run. Python's own leaks are not
# checked; huge allocations a test asks for fail as in C.
SAN_PRELOAD = $(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)
check-python-asan: python build/examples/bas_ucd
	@nm -D $(SOFILE) | grep -q __asan_init || \
	  { echo "check-python-asan: $(SOFILE) is not built with -fsanitize=address"; exit 1; }
	LD_PRELOAD="$(SAN_PRELOAD)" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1 EBM_LIBRARY=$(CURDIR)/lib/$(SONAME) $(PYTEST)

# make check-python-valgrind: the lifetime-sensitive Python tests under
# valgrind memcheck, against the library as `make` builds it: test_seeds.py
# (a generator made from a seed lives through the call), test_close_threads.py
# (close() during calls; smaller models under valgrind) and
# test_attack_lifetime.py (closed handles, objects that outlive their model's
# variables, reference cycles, calls and close() from threads). The
# interpreter allocates with malloc (PYTHONMALLOC=malloc), so that memcheck
# sees every object's block; tests/python.supp suppresses the interpreter's
# and the loader's own noise, never libebm's. Any invalid read or write or
# use of an uninitialised value fails the run (exit 9); leaks are not checked
# (the interpreter keeps its objects at exit). --fair-sched=yes: valgrind
# runs one thread at a time, and without it a thread waiting to close() a
# handle may not run again until the other thread's call has returned. About 1.5 minutes on 2 cores.
PY_VALGRIND_TESTS = python/tests/test_seeds.py python/tests/test_close_threads.py \
                    python/tests/test_attack_lifetime.py
check-python-valgrind: python
	@! nm -D $(SOFILE) | grep -q __asan_init || \
	  { echo "check-python-valgrind: $(SOFILE) is built with ASan; rebuild it with make clean all"; \
	    exit 1; }
	$(PYTEST_ENV) PYTHONMALLOC=malloc valgrind -q --error-exitcode=9 --leak-check=no --fair-sched=yes \
	  --suppressions=tests/python.supp $(VENV)/bin/python -m pytest $(PYTEST_ARGS) \
	  $(PY_VALGRIND_TESTS)

# The exported symbols, one per line, to compare with tests/abi/symbols.txt.
symbols: $(SOFILE)
	nm -D --defined-only $(SOFILE) | awk '$$2 == "T" { print $$3 }' | sort

# The trainers are installed as ebm-train-ucd, ebm-train-ucd-lmi, ebm-train-pcd
# and ebm-train-grbm (they link the static library: no run-time dependency on
# libebm.so); their pages are man/*.1, the library's overview man/ebm.3.
TRAINERS = train_ucd train_ucd_lmi train_pcd train_grbm
trainer_name = ebm-$(subst _,-,$1)
TRAINER_NAMES = $(foreach t,$(TRAINERS),$(call trainer_name,$t))
MAN1 = $(wildcard man/*.1)
MAN3 = man/ebm.3
install: all $(TRAINERS:%=build/examples/%)
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(PCDIR) \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3
	install -m 644 include/ebm.h $(DESTDIR)$(INCLUDEDIR)/ebm.h
	install -m 644 $(STATIC) $(DESTDIR)$(LIBDIR)/libebm.a
	install -m 755 $(SOFILE) $(DESTDIR)$(LIBDIR)/libebm.so.$(VERSION)
	ln -sf libebm.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libebm.so
	install -m 644 pkgconfig/ebm.pc $(DESTDIR)$(PCDIR)/ebm.pc
	install -d $(DESTDIR)$(CMAKEDIR)
	install -m 644 $(CMAKE_FILES) $(DESTDIR)$(CMAKEDIR)/
	$(foreach t,$(TRAINERS),install -m 755 build/examples/$t $(DESTDIR)$(BINDIR)/$(call trainer_name,$t) && ) :
	install -m 644 $(MAN3) $(DESTDIR)$(MANDIR)/man3/
	$(if $(MAN1),install -m 644 $(MAN1) $(DESTDIR)$(MANDIR)/man1/)

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/ebm.h $(DESTDIR)$(LIBDIR)/libebm.a \
	  $(DESTDIR)$(LIBDIR)/libebm.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	  $(DESTDIR)$(LIBDIR)/libebm.so $(DESTDIR)$(PCDIR)/ebm.pc \
	  $(TRAINER_NAMES:%=$(DESTDIR)$(BINDIR)/%) $(DESTDIR)$(MANDIR)/man3/$(notdir $(MAN3)) \
	  $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(sort $(notdir $(MAN1)) $(TRAINER_NAMES:%=%.1))) \
	  $(CMAKE_FILES:build/cmake/%=$(DESTDIR)$(CMAKEDIR)/%)
	@rmdir $(DESTDIR)$(CMAKEDIR) 2>/dev/null || :

# dpkg-buildpackage builds in the tree it is given and cleans it first (make
# clean), and writes the packages beside it: it is given a copy of this
# tree's files (tracked, and untracked but not ignored: git ls-files) in
# build/deb/src, so that the packages land in build/deb/ and this tree's
# build stays. -Jauto: parallel=<CPUs> in DEB_BUILD_OPTIONS.
DEB_DIR ?= build/deb
DEB_BUILD_OPTS ?= -us -uc -b -Jauto
deb:
	@command -v dpkg-buildpackage >/dev/null || \
	  { echo "make deb: no dpkg-buildpackage (apt-get install dpkg-dev); it then names the missing Build-Depends"; exit 1; }
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
	  { echo "make deb: copies the tree's files with git ls-files; elsewhere run dpkg-buildpackage $(DEB_BUILD_OPTS)"; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	git ls-files -z --cached --others --exclude-standard | \
	  tar --null -T - --ignore-failed-read -cf - | tar -xf - -C $(DEB_DIR)/src
	cd $(DEB_DIR)/src && dpkg-buildpackage $(DEB_BUILD_OPTS)
	rm -rf $(DEB_DIR)/src
	@ls -1 $(DEB_DIR)

# The packages built, checked with lintian, installed, used from outside
# (pkg-config, CMake, Python, the trainers) and purged: as root, with apt-get.
check-deb:
	bash tests/install/deb.sh

# The installed copy: pkg-config and CMake builds of tests/install/outside.c
# against a DESTDIR install, the man pages, the trainers (tests/install/run.sh).
check-install: all $(TRAINERS:%=build/examples/%)
	bash tests/install/run.sh

clean:
	rm -rf build lib/libebm.* pkgconfig/ebm.pc

# ---- Fuzzing and ThreadSanitizer (clang; .ci/run runs both) -----------------
# Both build the library into their own directories (build/fuzz, build/tsan)
# with their own flags files, so neither disturbs the default build.
#
#   make fuzz       the libFuzzer targets tests/fuzz/fuzz_*.c (ASan + UBSan, no
#                   recovery): the model loader (load), the numerical API (api),
#                   and the trainers' readers of examples/common: checkpoints
#                   (checkpoint) and data files (data: IDX, CSV, JSON; both
#                   linked with the examples/common objects they need, built
#                   with the same flags, and zlib); FUZZ_TARGETS picks some.
#                   All at once, FUZZ_SECONDS (600) each; the corpus grows in
#                   build/fuzz/corpus/<target>, seeded from tests/fuzz/corpus
#                   and the past findings, tests/fuzz/findings (regressions)
#   make fuzz-ci    the same, FUZZ_CI_SECONDS (60) each, from a fresh copy of
#                   the committed seeds (never modified); any crash, sanitizer
#                   report, leak, contract violation (abort) or hang
#                   (-timeout=10) fails, and the input is left in
#                   build/fuzz/artifacts/
#   make fuzz-corpus  regenerate tests/fuzz/corpus/: load and api by
#                   tests/fuzz/make_corpus.c; checkpoint (from tiny train_pcd
#                   and train_ucd runs) and data by tests/fuzz/make_trainer_corpus.sh
#   make check-tsan the concurrent const calls (tests/tsan/concurrent_const.c,
#                   and the suite's model and threads suites) under TSan,
#                   halt_on_error=1; TSAN_OPENMP_RUN=1 (default when libomp and
#                   its TSan tool libarcher are installed) also runs the
#                   threads suite built with clang's OpenMP
# FUZZ_FLAGS adds libFuzzer flags to every run (e.g. -jobs=2, -seed=1).
FUZZ_CC         ?= clang
FUZZ_CFLAGS     ?= -O1 -g -fno-omit-frame-pointer
FUZZ_SAN        ?= -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_SECONDS    ?= 600
FUZZ_CI_SECONDS ?= 60
FUZZ_FLAGS      ?=
FUZZ_TARGETS    ?= load api checkpoint data
FUZZ_RUN_FLAGS  = -timeout=10 -rss_limit_mb=1024 -print_final_stats=1
FUZZ_DIR        = build/fuzz
FUZZ_LIB_CFLAGS = $(WARN) $(DEFS) $(SIMD_DEFS) -Iinclude -Isrc $(CBLAS_CFLAGS) $(FUZZ_CFLAGS) \
                  $(FUZZ_SAN) -fsanitize=fuzzer-no-link -ffp-contract=off
FUZZ_OBJ        = $(SRC:src/%.c=$(FUZZ_DIR)/obj/%.o) $(SIMD_OBJ:build/%=$(FUZZ_DIR)/obj/%)
FUZZ_BINS       = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
# The targets of the trainers' readers and the examples/common modules they link.
FUZZ_READERS    = checkpoint data
FUZZ_COMMON_OBJ = $(patsubst %,$(FUZZ_DIR)/obj/common/%.o,checkpoint cli optim data bas)

.PHONY: fuzz fuzz-ci fuzz-build fuzz-corpus check-tsan
$(FUZZ_DIR)/flags: FORCE
	@mkdir -p $(FUZZ_DIR)/obj
	@f='$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) $(LIB_LIBS)'; \
	  [ "$$(cat $@ 2>/dev/null)" = "$$f" ] || printf '%s\n' "$$f" > $@
$(FUZZ_DIR)/obj/%.o: src/%.c $(FUZZ_DIR)/flags
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(FUZZ_DIR)/obj/simd_%.o: src/simd/kernels.c $(FUZZ_DIR)/flags
	$(FUZZ_CC) $(FUZZ_LIB_CFLAGS) $(DEPFLAGS) -fno-trapping-math -fno-math-errno $(SIMD_FLAGS_$*) \
	  -DEBM_KERNELS=ebm__kernels_$* -DEBM_KERNELS_LABEL=$* -c $< -o $@
$(FUZZ_DIR)/libebm.a: $(FUZZ_OBJ)
	rm -f $@
	ar rcs $@ $(FUZZ_OBJ)
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c include/ebm.h $(FUZZ_DIR)/libebm.a
	$(FUZZ_CC) $(WARN) $(DEFS) -Iinclude $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer \
	  -o $@ $< $(FUZZ_DIR)/libebm.a $(LIB_LIBS)
$(FUZZ_DIR)/obj/common/%.o: examples/common/%.c $(FUZZ_DIR)/flags
	@mkdir -p $(FUZZ_DIR)/obj/common
	$(FUZZ_CC) $(WARN) $(DEFS) -Iinclude $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link \
	  $(DEPFLAGS) -c $< -o $@
$(FUZZ_READERS:%=$(FUZZ_DIR)/fuzz_%): $(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_readers.h \
  include/ebm.h $(FUZZ_COMMON_OBJ) $(FUZZ_DIR)/libebm.a
	$(FUZZ_CC) $(WARN) $(DEFS) -Iinclude -Iexamples $(FUZZ_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer \
	  -o $@ $< $(FUZZ_COMMON_OBJ) $(FUZZ_DIR)/libebm.a -lz $(LIB_LIBS)
fuzz-build: $(FUZZ_BINS)

# The targets run at once (one process each), then each one's libFuzzer
# "Done N runs in S second(s)" is printed; on failure, the end of its log and
# the saved input.
FUZZ_RUN = pids=; for t in $(FUZZ_TARGETS); do \
	  dir=$(FUZZ_DIR)/$(FUZZ_CORPUS)/$$t; log=$(FUZZ_DIR)/$$t.log; \
	  $(FUZZ_FRESH) mkdir -p $$dir $(FUZZ_DIR)/artifacts; \
	  for f in tests/fuzz/corpus/$$t/* tests/fuzz/findings/$$t/*; do \
	    [ -f "$$f" ] && cp -n "$$f" $$dir/; done; \
	  echo "== fuzz_$$t: $(FUZZ_TIME) s from $$(ls $$dir | wc -l) inputs ($$dir)"; \
	  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ./$(FUZZ_DIR)/fuzz_$$t $(FUZZ_RUN_FLAGS) \
	    -max_total_time=$(FUZZ_TIME) -artifact_prefix=$(FUZZ_DIR)/artifacts/$$t- \
	    $(FUZZ_FLAGS) $$dir > $$log 2>&1 & pids="$$pids $$!"; \
	done; fail=0; set -- $$pids; for t in $(FUZZ_TARGETS); do \
	  log=$(FUZZ_DIR)/$$t.log; rc=0; wait $$1 || rc=$$?; shift; \
	  echo "== fuzz_$$t:"; \
	  grep -E '^INFO: Seed:|^Done [0-9]+ runs|^stat::number_of_executed_units|^stat::peak_rss_mb' $$log; \
	  if [ $$rc -ne 0 ]; then fail=1; echo "fuzz_$$t FAILED (exit $$rc); the end of $$log:"; \
	    grep -v -E '^\#[0-9]+' $$log | tail -n 60; \
	    ls -1 $(FUZZ_DIR)/artifacts/$$t-* 2>/dev/null | sed 's/^/  input: /'; \
	    echo "  reproduce: ./$(FUZZ_DIR)/fuzz_$$t <input>"; fi; \
	done; exit $$fail
fuzz: FUZZ_TIME = $(FUZZ_SECONDS)
fuzz: FUZZ_CORPUS = corpus
fuzz: FUZZ_FRESH =
fuzz-ci: FUZZ_TIME = $(FUZZ_CI_SECONDS)
fuzz-ci: FUZZ_CORPUS = corpus-ci
fuzz-ci: FUZZ_FRESH = rm -rf $$dir $(FUZZ_DIR)/artifacts/$$t-*;
fuzz fuzz-ci: $(FUZZ_BINS)
	@$(FUZZ_RUN)

# The seed corpora are committed; this rewrites them from the generators.
fuzz-corpus: $(STATIC) build/examples/train_pcd build/examples/train_ucd
	@mkdir -p build/fuzz-gen
	$(CC) $(WARN) $(DEFS) -Iinclude $(CFLAGS) -o build/fuzz-gen/make_corpus \
	  tests/fuzz/make_corpus.c $(STATIC) $(LIB_LIBS)
	rm -rf tests/fuzz/corpus/load tests/fuzz/corpus/api tests/fuzz/corpus/checkpoint \
	  tests/fuzz/corpus/data
	./build/fuzz-gen/make_corpus tests/fuzz/corpus
	bash tests/fuzz/make_trainer_corpus.sh build/examples tests/fuzz/corpus

# ThreadSanitizer. A recursive run builds the OpenMP variant in its own
# directory (TSAN_DIR, TSAN_OPENMP) with clang's libomp, whose OMPT tool
# libarcher tells TSan about OpenMP's synchronisation (libgomp, not
# instrumented, would give false reports); tests/tsan/libomp.supp ignores
# libomp's own locks. Any report fails (halt_on_error=1, exit code 66).
TSAN_CC      ?= clang
TSAN_CFLAGS  ?= -O1 -g -fno-omit-frame-pointer
TSAN_DIR     ?= build/tsan
TSAN_OPENMP  ?=
TSAN_ARCHER  ?= $(firstword $(wildcard /usr/lib/llvm-*/lib/libarcher.so))
TSAN_RUN_OPTIONS = halt_on_error=1 second_deadlock_stack=1
TSAN_LIB_CFLAGS = $(WARN) $(DEFS) $(SIMD_DEFS) -Iinclude -Isrc $(CBLAS_CFLAGS) $(TSAN_OPENMP) \
                  $(TSAN_CFLAGS) -fsanitize=thread -ffp-contract=off
TSAN_LIBS    = $(CBLAS_LIBS) $(TSAN_OPENMP) -lpthread -lm
TSAN_OBJ     = $(SRC:src/%.c=$(TSAN_DIR)/obj/%.o) $(SIMD_OBJ:build/%=$(TSAN_DIR)/obj/%)
$(TSAN_DIR)/flags: FORCE
	@mkdir -p $(TSAN_DIR)/obj
	@f='$(TSAN_CC) $(TSAN_LIB_CFLAGS) $(TSAN_LIBS)'; \
	  [ "$$(cat $@ 2>/dev/null)" = "$$f" ] || printf '%s\n' "$$f" > $@
$(TSAN_DIR)/obj/%.o: src/%.c $(TSAN_DIR)/flags
	$(TSAN_CC) $(TSAN_LIB_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(TSAN_DIR)/obj/simd_%.o: src/simd/kernels.c $(TSAN_DIR)/flags
	$(TSAN_CC) $(TSAN_LIB_CFLAGS) $(DEPFLAGS) -fno-trapping-math -fno-math-errno $(SIMD_FLAGS_$*) \
	  -DEBM_KERNELS=ebm__kernels_$* -DEBM_KERNELS_LABEL=$* -c $< -o $@
$(TSAN_DIR)/libebm.a: $(TSAN_OBJ)
	rm -f $@
	ar rcs $@ $(TSAN_OBJ)
$(TSAN_DIR)/concurrent_const: tests/tsan/concurrent_const.c include/ebm.h $(TSAN_DIR)/libebm.a
	$(TSAN_CC) $(WARN) $(DEFS) -Iinclude $(TSAN_CFLAGS) -fsanitize=thread -o $@ $< \
	  $(TSAN_DIR)/libebm.a $(TSAN_LIBS)
$(TSAN_DIR)/check_ebm: $(TEST_SRC) tests/tests.h $(TSAN_DIR)/libebm.a
	$(TSAN_CC) $(WARN) $(DEFS) -Wno-missing-prototypes -Iinclude -Isrc $(CBLAS_CFLAGS) \
	  $(CHECK_CFLAGS) $(TSAN_OPENMP) $(TSAN_CFLAGS) -fsanitize=thread -ffp-contract=off \
	  $(TEST_WRAP) -o $@ $(TEST_SRC) $(TSAN_DIR)/libebm.a $(TSAN_LIBS) $(CHECK_LIBS)

# The pthread runs (the concurrent const calls, the suite's model suite with
# its two-thread test, the threads suite on the library's pool but its fork
# test), then the OpenMP build's threads suite if libarcher
# is there (TSAN_OPENMP_RUN=0 skips it).
TSAN_OPENMP_RUN ?= $(if $(TSAN_ARCHER),1,0)
TSAN_ENV = OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} TSAN_OPTIONS='$(TSAN_RUN_OPTIONS)' \
           CK_FORK=no
check-tsan: $(TSAN_DIR)/concurrent_const $(TSAN_DIR)/check_ebm
	$(TSAN_ENV) ./$(TSAN_DIR)/concurrent_const
	$(TSAN_ENV) CK_RUN_SUITE=model ./$(TSAN_DIR)/check_ebm
	$(TSAN_ENV) CK_RUN_SUITE=threads CK_EXCLUDE_TAGS=fork ./$(TSAN_DIR)/check_ebm
ifeq ($(TSAN_OPENMP_RUN),1)
	$(MAKE) --no-print-directory tsan-openmp TSAN_DIR=build/tsan-omp TSAN_OPENMP=-fopenmp
else
	@echo "check-tsan: the OpenMP run is skipped (no libarcher.so: apt-get install libomp-dev)"
endif
	@echo "check-tsan: no data race reported"
tsan-openmp: $(TSAN_DIR)/check_ebm
	OPENBLAS_NUM_THREADS=$${OPENBLAS_NUM_THREADS:-1} CK_FORK=no OMP_NUM_THREADS=3 \
	  TSAN_OPTIONS='$(TSAN_RUN_OPTIONS) suppressions=tests/tsan/libomp.supp' \
	  OMP_TOOL_LIBRARIES=$(TSAN_ARCHER) CK_RUN_SUITE=threads ./$(TSAN_DIR)/check_ebm
.PHONY: tsan-openmp

# The header dependencies that -MMD wrote (only those that exist: a missing
# .d means its object is not built yet, and then nothing is out of date).
# They are the compiler's output, never remade by make (the empty rule keeps
# make's built-in rules from trying).
-include $(wildcard $(OBJ:.o=.d) $(FUZZ_OBJ:.o=.d) $(FUZZ_COMMON_OBJ:.o=.d) $(TSAN_OBJ:.o=.d))
%.d: ;
