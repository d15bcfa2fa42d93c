/*
 * A PMI-1 client written against the wire format only: init (subversion
 * from argv[1], default 1), the job queries, a put of its own key, a
 * barrier, a get of every other rank's key, name publishing, an unknown
 * command, finalize. Exits 0 and prints one "ok" line if every answer is
 * what pmi-wire.md specifies.
 *
 * With argv[2], a multi-host job: PMI_process_mapping must be argv[2]
 * (instead of one node holding every rank), MPI_LOCALRANKID/NRANKS only
 * need to be consistent, and the "ok" line ends with "local ID/COUNT" for
 * the script to check. Talks over PMI_PORT when PMI_FD is not set.
 */
#include "common.h"

#include <dirent.h>

static char answer[PMI_LINE_MAX];

static void ask(const char *fmt, ...)
{
    char request[PMI_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(request, sizeof request, fmt, ap);
    va_end(ap);
    pmi_ask(request, answer, sizeof answer);
}

/* Fails if any socket other than PMI_FD was inherited. */
static void check_inherited_sockets(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        char path[300], target[300];
        int fd = atoi(e->d_name);
        if (e->d_name[0] == '.' || fd == pmi_fd() || fd == dirfd(d))
            continue;
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(path, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (strncmp(target, "socket:", 7) == 0)
                fail("fd %d (%s) was inherited besides PMI_FD", fd, target);
        }
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    const char *subversion = argc > 1 ? argv[1] : "1";
    const char *mapping = argc > 2 ? argv[2] : NULL;
    int local_id = env_int("MPI_LOCALRANKID", -1), local_n = env_int("MPI_LOCALNRANKS", -1);
    int rank = my_rank(), size = job_size();
    char kvsname[PMI_LINE_MAX], expected[PMI_LINE_MAX], value[PMI_LINE_MAX];

    if (rank < 0 || size < 1 || rank >= size)
        fail("bad PMI_RANK/PMI_SIZE");
    if (!mapping && (local_n != size || local_id != rank))
        fail("MPI_LOCALNRANKS/MPI_LOCALRANKID do not match PMI_SIZE/PMI_RANK");
    if (mapping && (local_id < 0 || local_n < 1 || local_id >= local_n || local_n > size))
        fail("bad MPI_LOCALRANKID=%d MPI_LOCALNRANKS=%d", local_id, local_n);
    if (!getenv("OXMPI_JOBID") || !*getenv("OXMPI_JOBID"))
        fail("OXMPI_JOBID is not set");
    check_inherited_sockets();

    ask("cmd=init pmi_version=1 pmi_subversion=%s\n", subversion);
    snprintf(expected, sizeof expected,
             "cmd=response_to_init pmi_version=1 pmi_subversion=%s rc=0", subversion);
    if (strcmp(answer, expected) != 0)
        fail("init answered '%s'", answer);

    ask("cmd=get_maxes\n");
    if (strcmp(answer, "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024") != 0)
        fail("get_maxes answered '%s'", answer);
    ask("cmd=get_appnum\n");
    if (strcmp(answer, "cmd=appnum appnum=0") != 0)
        fail("get_appnum answered '%s'", answer);
    ask("cmd=get_my_kvsname\n");
    expect_field(answer, "cmd", "my_kvsname");
    if (!pmi_field(answer, "kvsname", kvsname, sizeof kvsname))
        fail("get_my_kvsname answered '%s'", answer);
    /* Not known unless mpiexec is given -usize (as with Hydra). */
    ask("cmd=get_universe_size\n");
    expect_field(answer, "size", "-1");

    ask("cmd=get kvsname=%s key=PMI_process_mapping\n", kvsname);
    if (mapping)
        snprintf(expected, sizeof expected, "%s", mapping);
    else
        snprintf(expected, sizeof expected, "(vector,(0,1,%d))", size);
    expect_field(answer, "rc", "0");
    expect_field(answer, "value", expected);

    ask("cmd=put kvsname=%s key=card-%d value=rank=%d,size=%d\n", kvsname, rank, rank, size);
    if (strcmp(answer, "cmd=put_result rc=0 msg=success") != 0)
        fail("put answered '%s'", answer);
    if (rank == 0) {
        ask("cmd=publish_name service=svc-test port=port-of-0\n");
        expect_field(answer, "cmd", "publish_result");
        expect_field(answer, "rc", "0");
    }

    ask("cmd=barrier_in\n");
    if (strcmp(answer, "cmd=barrier_out") != 0)
        fail("barrier_in answered '%s'", answer);

    for (int r = 0; r < size; r++) {
        ask("cmd=get kvsname=%s key=card-%d\n", kvsname, r);
        snprintf(expected, sizeof expected, "rank=%d,size=%d", r, size);
        expect_field(answer, "cmd", "get_result");
        expect_field(answer, "rc", "0");
        expect_field(answer, "value", expected);
    }
    ask("cmd=get kvsname=%s key=no-such-key\n", kvsname);
    if (strcmp(answer, "cmd=get_result rc=-1 msg=key_no-such-key_not_found value=unknown") != 0)
        fail("get of a missing key answered '%s'", answer);

    ask("cmd=lookup_name service=svc-test\n");
    expect_field(answer, "cmd", "lookup_result");
    expect_field(answer, "rc", "0");
    expect_field(answer, "port", "port-of-0");
    ask("cmd=lookup_name service=svc-none\n");
    expect_field(answer, "cmd", "lookup_result");
    expect_field(answer, "rc", "1");

    ask("cmd=frobnicate x=1\n");
    if (strcmp(answer, "cmd=frobnicate_result rc=-1 msg=unknown_command") != 0)
        fail("unknown command answered '%s'", answer);

    /* Everyone has looked the name up before rank 0 may unpublish it. */
    ask("cmd=barrier_in\n");
    if (strcmp(answer, "cmd=barrier_out") != 0)
        fail("second barrier_in answered '%s'", answer);
    if (rank == 0) {
        ask("cmd=unpublish_name service=svc-test\n");
        expect_field(answer, "rc", "0");
    }

    ask("cmd=finalize\n");
    if (strcmp(answer, "cmd=finalize_ack") != 0)
        fail("finalize answered '%s'", answer);
    if (pmi_recv(value, sizeof value) != -1)
        fail("the server did not close the connection after finalize_ack");

    if (mapping)
        printf("pmi_client rank %d of %d ok local %d/%d\n", rank, size, local_id, local_n);
    else
        printf("pmi_client rank %d of %d ok\n", rank, size);
    return 0;
}
