/* clock.h: the monotonic clock in seconds, for the stand-alone benchmark
 * programs of oxmpi's bench/ that time without MPI_Wtime (no MPI, or the
 * same clock on both sides of a comparison); and the factor on the time
 * budgets of the programs that size their loops to a budget. */
#ifndef OXMPI_BENCH_CLOCK_H
#define OXMPI_BENCH_CLOCK_H
#include <stdlib.h>
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* BENCH_BUDGET_SCALE (bench/run.sh sets it, 0.3 with QUICK=1): a factor on
 * the seconds a program's timed loops may take; 1 when unset or invalid.
 * Only the process that plans the loops reads it (rank 0, or the parent of
 * a forked pair). */
static inline double budget_scale(void)
{
    const char *s = getenv("BENCH_BUDGET_SCALE");
    double f = s ? atof(s) : 1.0;
    return f > 0 && f <= 10 ? f : 1.0;
}
#endif
