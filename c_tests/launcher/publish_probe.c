/* publish_probe.c: publishes a service name with errors returned and
 * prints what MPI_Publish_name said ("publish: ok" or "publish: <error
 * string>"), then exits 0. c_tests/pmix.sh runs it under a PMIx server
 * without a name service (Slurm's), where the answer must say so. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    char msg[MPI_MAX_ERROR_STRING];
    int len, rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Publish_name("oxmpi-publish-probe", MPI_INFO_NULL, "probe-port");
    if (rank == 0) {
        if (rc == MPI_SUCCESS) {
            printf("publish: ok\n");
            MPI_Unpublish_name("oxmpi-publish-probe", MPI_INFO_NULL, "probe-port");
        } else {
            MPI_Error_string(rc, msg, &len);
            printf("publish: %s\n", msg);
        }
    }
    MPI_Finalize();
    return 0;
}
