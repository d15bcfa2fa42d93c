/* mpiexec's PMI spawn, spoken raw over PMI_FD (plain libc, no MPI library):
 * the parent (a world of 1) puts a key, asks for a universe size, spawns
 * two commands (2 copies of itself with an argument holding a space and
 * '=', then 1 copy with a `path` info key) with a preput key, and checks
 * that bad spawns (a missing program, another host, a missing wdir) fail
 * with rc=-1. Each child checks PMI_SPAWNED, OXMPI_WORLD_BASE, its rank,
 * size and appnum, its argument, the preput key in its group's KVS, and
 * the parent's key through kvsname=$OXMPI_JOB_KVS, then runs a barrier of
 * its group alone. Exit codes decide; the parent prints "No Errors". */
#include <limits.h>

#include "launcher/common.h"

static const char *who = "parent";

/* Fails naming who and what, with the line that was wrong. */
static void refuse(const char *what, const char *got) {
    fail("spawn_pmi %s: %s (got: %s)", who, what, got ? got : "(null)");
}

/* One answer line to `request`. */
static char *ask(const char *request) {
    static char line[2048];
    pmi_ask(request, line, sizeof line);
    return line;
}

static void expect(const char *request, const char *answer) {
    char *got = ask(request);
    if (strcmp(got, answer) != 0) {
        char what[512];
        snprintf(what, sizeof what, "'%.200s' should be answered '%.200s'", request, answer);
        refuse(what, got);
    }
}

static void spawn_expecting_failure(const char *segment, const char *why) {
    char *got = ask(segment);
    const char *refused = "cmd=spawn_result rc=-1 msg=";
    if (strncmp(got, refused, strlen(refused)) != 0)
        refuse(why, got);
}

static int parent(const char *self) {
    expect("cmd=init pmi_version=1 pmi_subversion=1\n",
           "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    expect("cmd=get_universe_size\n", "cmd=universe_size size=5");
    char *kvs_line = ask("cmd=get_my_kvsname\n");
    char kvs[256];
    if (!pmi_field(kvs_line, "kvsname", kvs, sizeof kvs))
        refuse("no kvsname", kvs_line);
    char request[4096];
    snprintf(request, sizeof request, "cmd=put kvsname=%s key=parent_card value=hello\n", kvs);
    expect(request, "cmd=put_result rc=0 msg=success");

    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", self);
    *strrchr(dir, '/') = '\0';
    const char *name = strrchr(self, '/') + 1;
    snprintf(request, sizeof request,
             "mcmd=spawn\nnprocs=2\nexecname=%s\ntotspawns=2\nspawnssofar=1\n"
             "arg1=hello world=1\nargcnt=1\npreput_num=1\n"
             "preput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=port#1$\n"
             "info_num=1\ninfo_key_0=host\ninfo_val_0=localhost\nendcmd\n"
             "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=2\nspawnssofar=2\n"
             "arg1=second\nargcnt=1\npreput_num=1\n"
             "preput_key_0=PARENT_ROOT_PORT_NAME\npreput_val_0=port#1$\n"
             "info_num=2\ninfo_key_0=path\ninfo_val_0=%s\n"
             "info_key_1=unknown_key\ninfo_val_1=ignored\nendcmd\n",
             self, name, dir);
    expect(request, "cmd=spawn_result rc=0 errcodes=0,0,0");

    spawn_expecting_failure("mcmd=spawn\nnprocs=1\nexecname=./no-such-program\ntotspawns=1\n"
                            "spawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n",
                            "a missing program must fail the spawn");
    spawn_expecting_failure("mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=1\n"
                            "spawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=1\n"
                            "info_key_0=host\ninfo_val_0=elsewhere.invalid\nendcmd\n",
                            "another host must fail the spawn");
    /* Two segments, the second bad: one answer, nothing started. */
    spawn_expecting_failure("mcmd=spawn\nnprocs=1\nexecname=/bin/false\ntotspawns=2\n"
                            "spawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n"
                            "mcmd=spawn\nnprocs=1\nexecname=/bin/true\ntotspawns=2\n"
                            "spawnssofar=2\nargcnt=0\npreput_num=0\ninfo_num=1\n"
                            "info_key_0=wdir\ninfo_val_0=/no/such/dir\nendcmd\n",
                            "a missing wdir must fail the spawn");
    expect("cmd=barrier_in\n", "cmd=barrier_out");
    expect("cmd=finalize\n", "cmd=finalize_ack");
    printf("No Errors\n");
    return 0;
}

static int child(int argc, char **argv) {
    const char *rank_text = getenv("PMI_RANK");
    int rank = rank_text ? atoi(rank_text) : -1;
    static char name[32];
    snprintf(name, sizeof name, "child %d", rank);
    who = name;
    if (!getenv("PMI_SPAWNED") || strcmp(getenv("PMI_SPAWNED"), "1") != 0)
        refuse("PMI_SPAWNED is not 1", getenv("PMI_SPAWNED"));
    if (!getenv("PMI_SIZE") || strcmp(getenv("PMI_SIZE"), "3") != 0)
        refuse("PMI_SIZE is not 3", getenv("PMI_SIZE"));
    if (rank < 0 || rank > 2)
        refuse("bad PMI_RANK", rank_text);
    if (!getenv("OXMPI_WORLD_BASE") || strcmp(getenv("OXMPI_WORLD_BASE"), "1") != 0)
        refuse("OXMPI_WORLD_BASE is not 1", getenv("OXMPI_WORLD_BASE"));
    const char *job_kvs = getenv("OXMPI_JOB_KVS");
    if (!job_kvs)
        refuse("no OXMPI_JOB_KVS", NULL);
    const char *arg = rank < 2 ? "hello world=1" : "second";
    if (argc != 2 || strcmp(argv[1], arg) != 0)
        refuse("wrong argument", argc > 1 ? argv[1] : NULL);

    expect("cmd=init pmi_version=1 pmi_subversion=1\n",
           "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0");
    expect("cmd=get_appnum\n", rank < 2 ? "cmd=appnum appnum=0" : "cmd=appnum appnum=1");
    char request[512], value[256];
    char *line = ask("cmd=get_my_kvsname\n");
    char own_kvs[256];
    if (!pmi_field(line, "kvsname", own_kvs, sizeof own_kvs) || strcmp(own_kvs, job_kvs) == 0)
        refuse("the group's KVS is not its own", line);
    expect("cmd=get key=PARENT_ROOT_PORT_NAME\n", "cmd=get_result rc=0 msg=success value=port#1$");
    snprintf(request, sizeof request, "cmd=get kvsname=%s key=PMI_process_mapping\n", own_kvs);
    expect(request, "cmd=get_result rc=0 msg=success value=(vector,(0,1,3))");
    snprintf(request, sizeof request, "cmd=get kvsname=%s key=parent_card\n", job_kvs);
    line = ask(request);
    if (!pmi_field(line, "value", value, sizeof value) || strcmp(value, "hello") != 0)
        refuse("the parent's key through OXMPI_JOB_KVS", line);
    expect("cmd=barrier_in\n", "cmd=barrier_out");
    expect("cmd=finalize\n", "cmd=finalize_ack");
    return 0;
}

int main(int argc, char **argv) {
    if (!getenv("PMI_FD"))
        refuse("no PMI_FD", NULL);
    if (getenv("PMI_SPAWNED"))
        return child(argc, argv);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        refuse("cannot read /proc/self/exe", NULL);
    self[n] = '\0';
    return parent(self);
}
