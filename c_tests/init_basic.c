/* The world model's life cycle and environment queries: MPI_Init_thread,
 * thread levels, rank and size (size checked against argv[1]), version
 * strings, processor name, Wtime/Wtick, Initialized/Finalized. */
#include "mpitest.h"
#include <unistd.h>

int main(int argc, char **argv) {
    int flag = -1, provided = -1, rank = -1, size = -1, len = 0;
    int expected_size = argc > 1 ? atoi(argv[1]) : -1;

    CHECK(MPI_Initialized(&flag) == MPI_SUCCESS && flag == 0, "initialized before init: %d", flag);
    CHECK(MPI_Finalized(&flag) == MPI_SUCCESS && flag == 0, "finalized before init: %d", flag);
    double t_before = MPI_Wtime();

    CHECK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS, "init_thread");
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    MPI_Query_thread(&flag);
    CHECK(flag == MPI_THREAD_MULTIPLE, "query_thread %d", flag);
    MPI_Is_thread_main(&flag);
    CHECK(flag == 1, "is_thread_main %d", flag);
    MPI_Initialized(&flag);
    CHECK(flag == 1, "initialized after init %d", flag);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    if (expected_size > 0)
        CHECK(size == expected_size, "size %d, expected %d", size, expected_size);
    const char *pmi_rank = getenv("PMI_RANK");
    if (pmi_rank)
        CHECK(rank == atoi(pmi_rank), "rank %d but PMI_RANK %s", rank, pmi_rank);
    /* oxmpi's mpiexec names the process that started the rank (the one
     * tracer a rank admits under Yama ptrace_scope=1). */
    const char *launcher = getenv("OXMPI_LAUNCHER_PID");
    if (getenv("OXMPI_JOBID"))
        CHECK(launcher && atoi(launcher) == (int)getppid(), "OXMPI_LAUNCHER_PID %s, parent %d",
              launcher ? launcher : "(unset)", (int)getppid());
    int srank = -1, ssize = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &srank);
    MPI_Comm_size(MPI_COMM_SELF, &ssize);
    CHECK(srank == 0 && ssize == 1, "self rank %d size %d", srank, ssize);

    int version = 0, subversion = -1;
    MPI_Get_version(&version, &subversion);
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION, "version %d.%d", version, subversion);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    MPI_Get_library_version(lib, &len);
    CHECK(len == (int)strlen(lib) && strstr(lib, "oxmpi") && strstr(lib, "MPICH ABI"), "library version '%s'", lib);
    char host[MPI_MAX_PROCESSOR_NAME], expected_host[256];
    MPI_Get_processor_name(host, &len);
    /* The launcher's name for this host when it gives one. */
    if (getenv("OXMPI_HOSTNAME") && *getenv("OXMPI_HOSTNAME"))
        snprintf(expected_host, sizeof expected_host, "%s", getenv("OXMPI_HOSTNAME"));
    else
        gethostname(expected_host, sizeof expected_host);
    CHECK(len > 0 && len == (int)strlen(host) && strcmp(host, expected_host) == 0, "processor name '%s'", host);

    char name[MPI_MAX_OBJECT_NAME];
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
    MPI_Comm_set_name(MPI_COMM_SELF, "myself");
    MPI_Comm_get_name(MPI_COMM_SELF, name, &len);
    CHECK(strcmp(name, "myself") == 0, "self name '%s'", name);

    double t1 = MPI_Wtime();
    usleep(20000);
    double t2 = MPI_Wtime();
    CHECK(t1 >= t_before && t2 - t1 >= 0.015, "wtime %f %f %f", t_before, t1, t2);
    CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1e-3, "wtick %g", MPI_Wtick());

    CHECK(MPI_Finalize() == MPI_SUCCESS, "finalize");
    MPI_Finalized(&flag);
    CHECK(flag == 1, "finalized after finalize %d", flag);
    MPI_Initialized(&flag);
    CHECK(flag == 1, "initialized stays true after finalize %d", flag);
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
