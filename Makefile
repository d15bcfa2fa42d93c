# oxmpi: build, install, test, demo, bench. See README.md.
PREFIX ?= $(CURDIR)/build/stage
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
CARGO ?= cargo
STAGE := $(CURDIR)/build/stage
# release (default) or debug: which cargo profile `install` builds and copies.
PROFILE ?= release
CARGO_PROFILE_FLAG := $(if $(filter release,$(PROFILE)),--release,)

.PHONY: all build install stage stage-debug check check-mpich check-mpi4py unit-tests fuzz reliability-report demo bench clean

all: stage

# Release library and mpiexec; build.rs regenerates include/mpi.h and
# include/mpi_abi.h. The second invocation builds the MPI 5.0 standard ABI
# library (libmpi_abi.so.1, feature standard-abi) in its own target
# directory: the same crate with other entry points (a second full
# compile of the library, about as long as the first).
STDABI_TARGET := target/stdabi
build:
	$(CARGO) build $(CARGO_PROFILE_FLAG)
	$(CARGO) build $(CARGO_PROFILE_FLAG) --lib --features standard-abi --target-dir $(STDABI_TARGET)

install: build
	install -d $(PREFIX)/lib $(PREFIX)/lib/pkgconfig $(PREFIX)/include $(PREFIX)/bin
	install -m 0755 target/$(PROFILE)/liboxmpi.so $(PREFIX)/lib/liboxmpi.so
	for l in libmpi.so libmpi.so.12 libmpich.so libmpich.so.12; do ln -sf liboxmpi.so $(PREFIX)/lib/$$l; done
	install -m 0644 include/mpi.h $(PREFIX)/include/mpi.h
	install -m 0755 $(STDABI_TARGET)/$(PROFILE)/liboxmpi.so $(PREFIX)/lib/libmpi_abi.so.1
	ln -sf libmpi_abi.so.1 $(PREFIX)/lib/libmpi_abi.so
	install -d $(PREFIX)/include/abi
	install -m 0644 include/mpi_abi.h $(PREFIX)/include/mpi_abi.h
	install -m 0644 include/mpi_abi.h $(PREFIX)/include/abi/mpi.h
	install -m 0755 target/$(PROFILE)/mpiexec $(PREFIX)/bin/mpiexec
	ln -sf mpiexec $(PREFIX)/bin/mpirun
	sed 's|@PREFIX@|$(PREFIX)|g' tools/mpicc.in > $(PREFIX)/bin/mpicc && chmod 0755 $(PREFIX)/bin/mpicc
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' tools/oxmpi.pc.in > $(PREFIX)/lib/pkgconfig/oxmpi.pc
	for p in mpi.pc mpi-c.pc; do ln -sf oxmpi.pc $(PREFIX)/lib/pkgconfig/$$p; done

# The tree the tests and the demo use: an install under build/stage.
stage:
	$(MAKE) install PREFIX=$(STAGE)

# A debug build (lock-order checks on) for the threaded tests of make check.
stage-debug:
	$(MAKE) install PREFIX=$(CURDIR)/build/stage-debug PROFILE=debug

check: stage
	bash tools/check.sh

# MPICH 4.0.2's own test suite against oxmpi (tools/mpich_suite.py): built
# with oxmpi's mpicc and run with its mpiexec, then built with MPICH's
# mpicc.mpich and run on oxmpi through LD_LIBRARY_PATH and LD_PRELOAD, and
# on MPICH itself for the counts beside (each run at most half its time
# limit, 90 s by default: on 2 noisy vCPUs rma/large_acc_flush_local takes
# 35-80 s on oxmpi and over 120 s on MPICH).
# Fails when an entry of tools/mpich_suite/expected.txt marked pass fails.
# make check runs the subset in tools/mpich_suite/subset.txt.
MPICH_FOLDERS ?= init,pt2pt,part,group,info,errhan,attr,comm,coll,datatype,threads,topo,rma,io,errors,mpi_t,spawn
check-mpich: stage
	python3 tools/mpich_suite.py --folders $(MPICH_FOLDERS) --modes oxmpi,ld_library_path,ld_preload,mpich --timeout-scale 0.5 --report docs/mpich-suite.md

# mpi4py's test suite (tools/mpi4py_suite.py): the latest mpi4py from PyPI
# built from source against oxmpi (build/mpi4py-venv) and against MPICH
# (build/mpi4py-venv-mpich), its tests run on 1, 2 and 4 ranks with each
# library's mpiexec; rewrites docs/mpi4py.md. Fails when oxmpi fails a test
# that MPICH passes and tools/mpi4py_suite/expected.txt does not explain.
# make check runs the oxmpi half.
check-mpi4py: stage
	python3 tools/mpi4py_suite.py --impls oxmpi,mpich --summary docs/mpi4py.md

# The Rust unit tests alone (make check runs them too).
unit-tests:
	$(CARGO) test --release

# The fuzz targets (proptest, tests named fuzz_*) with many cases each
# (make check runs them with proptest's default, 256); FUZZ_CASES sets the
# number. A failure is shrunk to a minimal input and kept in
# proptest-regressions/, which is committed, so it is tried first forever
# after.
FUZZ_CASES ?= 100000
fuzz:
	PROPTEST_CASES=$(FUZZ_CASES) $(CARGO) test --release fuzz_

# Runs the tests that print rows of docs/reliability.md (those whose source
# prints REPORT lines) and the fuzz targets, and rewrites its tables from
# what they printed (make check writes the same tables to
# build/reliability.md). A failing test's rows are kept, marked FAIL.
reliability-report: stage
	rm -f build/reliability-rows.txt
	tests=$$(grep -l -e 'REPORT|' -e mt_reliability_row c_tests/*.c c_tests/*.sh | xargs -n1 basename | sed 's/\.c$$//'); \
	OXMPI_TEST_REPORT=$(CURDIR)/build/reliability-rows.txt TESTS="$$(echo $$tests)" bash c_tests/run.sh \
	    || echo "reliability-report: some tests failed; their rows are marked FAIL"
	$(CARGO) test --release fuzz_ > build/unit-tests.log 2>&1 || echo "reliability-report: a fuzz target failed"
	python3 tools/reliability_report.py build/reliability-rows.txt build/unit-tests.log build/reliability.md --into docs/reliability.md

# The main job: 4 ranks on two simulated hosts (shared memory inside a
# host, TCP between them) through several epochs of MPI Sessions with skew.
demo: stage
	$(STAGE)/bin/mpicc -O2 -o build/reinit_demo examples/reinit_demo.c
	$(STAGE)/bin/mpiexec -n 4 -hosts node-a:2,node-b:2 -launcher fork -hostname-env OXMPI_HOSTNAME build/reinit_demo 5
	$(STAGE)/bin/mpicc -O2 -o build/world_demo examples/world_demo.c
	$(STAGE)/bin/mpiexec -n 4 build/world_demo

# oxmpi against Debian MPICH in the same run; prints ratios and targets.
# QUICK=1: a short run (fewer repetitions); see bench/README.md.
QUICK ?=
bench: stage
	QUICK=$(QUICK) bash bench/run.sh

clean:
	$(CARGO) clean
	rm -rf build
