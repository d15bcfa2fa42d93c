/*
 * Rank 1 exits with code 0 right after PMI init; the others enter a PMI
 * barrier that can therefore never complete. mpiexec must notice and end
 * the job instead of hanging.
 */
#include "common.h"

int main(int argc, char **argv)
{
    char answer[PMI_LINE_MAX];
    if (argc < 2)
        fail("usage: early_exit PIDDIR");
    record_pid(argv[1]);
    pmi_init();
    if (my_rank() == 1)
        return 0;
    pmi_ask("cmd=barrier_in\n", answer, sizeof answer);
    fail("barrier completed although rank 1 is gone: '%s'", answer);
    return 1;
}
