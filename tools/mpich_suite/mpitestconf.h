/* The configuration header of MPICH's test suite (test/mpi/include/
 * mpitestconf.h, normally written by its configure), by hand for a
 * Debian/x86-64 machine and oxmpi's (or MPICH's) mpi.h: C only, no
 * Fortran, no GPU, no RMA/IO/spawn feature macros (the suite's own
 * conditionals then leave those parts out). Used by tools/mpich_suite.py. */
#ifndef MPITESTCONF_H_INCLUDED
#define MPITESTCONF_H_INCLUDED

#define HAVE_DLFCN_H 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_GETRUSAGE 1
#define HAVE_INTTYPES_H 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define HAVE_LONG_LONG 1
#define HAVE_MEMORY_H 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_PTHREAD_H 1
#define HAVE_STDARG_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRDUP 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_USLEEP 1
#define HAVE__BOOL 1
#define POINTERINT_t int64_t
#define SIZEOF_INT 4
#define SIZEOF_LONG 8
#define SIZEOF_LONG_LONG 8
#define SIZEOF_MPI_OFFSET 8
#define SIZEOF_SHORT 2
#define SIZEOF_VOID_P 8
#define STDC_HEADERS 1
/* (mpithreadtest.h defines the THREAD_PACKAGE_* values.) */
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
#define USE_LONG_DOUBLE_COMPLEX 1
#define PACKAGE_VERSION "4.0.2"
#define VERSION "4.0.2"

#endif
