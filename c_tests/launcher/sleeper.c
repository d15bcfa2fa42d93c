/*
 * Every rank records its pid in argv[1] and sleeps argv[2] seconds. With
 * argv[3] = "ignore-term" it ignores SIGTERM, so only SIGKILL ends it.
 */
#include "common.h"

int main(int argc, char **argv)
{
    if (argc < 3)
        fail("usage: sleeper PIDDIR SECONDS [ignore-term]");
    if (argc > 3 && strcmp(argv[3], "ignore-term") == 0)
        signal(SIGTERM, SIG_IGN);
    record_pid(argv[1]);
    sleep_ms(atol(argv[2]) * 1000L);
    return 0;
}
