/*
 * The last rank sends `cmd=abort exitcode=7` over PMI once every rank has
 * recorded its pid in argv[1], then waits to be killed; the others sleep
 * 30 s. mpiexec must end the job with code 7.
 */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        fail("usage: abort7 PIDDIR");
    record_pid(argv[1]);
    pmi_init();
    if (my_rank() != job_size() - 1) {
        sleep_ms(30000);
        return 0;
    }
    wait_for_all_pids(argv[1]);
    pmi_send("cmd=abort exitcode=7\n");
    sleep_ms(30000);
    return 0;
}
