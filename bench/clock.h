/* clock.h: the monotonic clock in seconds, for the stand-alone benchmark
 * programs of oxmpi's bench/ that time without MPI_Wtime (no MPI, or the
 * same clock on both sides of a comparison). */
#ifndef OXMPI_BENCH_CLOCK_H
#define OXMPI_BENCH_CLOCK_H
#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
#endif
