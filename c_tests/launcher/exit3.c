/*
 * Rank 1 exits with code 3 once every rank has recorded its pid in
 * argv[1]; the others sleep 30 s, so mpiexec must bring them down.
 */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        fail("usage: exit3 PIDDIR");
    record_pid(argv[1]);
    if (my_rank() != 1) {
        sleep_ms(30000);
        return 0;
    }
    wait_for_all_pids(argv[1]);
    return 3;
}
