/*
 * Rank argv[2] (default 1) dies of SIGSEGV once every rank has recorded its
 * pid in argv[1]; the others sleep 30 s, so mpiexec must bring them down.
 */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        fail("usage: crash PIDDIR [RANK]");
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    record_pid(argv[1]);
    if (my_rank() != victim) {
        sleep_ms(30000);
        return 0;
    }
    wait_for_all_pids(argv[1]);
    no_core_dumps();
    signal(SIGSEGV, SIG_DFL);
    raise(SIGSEGV);
    return 0;
}
