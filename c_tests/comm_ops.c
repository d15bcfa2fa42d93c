/* Communicator construction and attributes (world model): Comm_create,
 * Comm_create_group, Comm_split_type, dup_with_info/set_info/get_info,
 * idup, groups of communicators, attributes with copy and delete callbacks
 * (incl. MPI_COMM_DUP_FN and MPI_COMM_NULL_COPY_FN), the predefined
 * attributes, intercommunicators (create, point-to-point, remote group,
 * merge) and bad input. */
#include "mpitest.h"

static int deletes = 0, copies = 0;

static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)key;
    copies++;
    *(void **)out = (void *)((char *)in + *(int *)extra);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm c, int key, void *value, void *extra) {
    (void)c; (void)key; (void)value; (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag, result;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Predefined attributes. */
    int *tag_ub, *universe, *wtime_global, *appnum, *host, *io;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && *tag_ub >= (1 << 30) - 1, "MPI_TAG_UB %d", flag ? *tag_ub : -1);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    /* Set only when the launcher knows it (mpiexec -usize). */
    CHECK(!flag || *universe >= size, "MPI_UNIVERSE_SIZE");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &wtime_global, &flag);
    CHECK(flag && *wtime_global == 0, "MPI_WTIME_IS_GLOBAL");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    CHECK(flag && *appnum == 0, "MPI_APPNUM");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag);
    CHECK(flag && *host == MPI_PROC_NULL, "MPI_HOST");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &io, &flag);
    CHECK(flag && (*io == MPI_ANY_SOURCE || *io == rank), "MPI_IO");

    /* User attributes: copy on dup, delete on free, DUP_FN, NULL_COPY_FN. */
    int k1, k2, k3, offset = 3;
    static char base[16];
    MPI_Comm_create_keyval(copy_fn, delete_fn, &k1, &offset);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k2, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k3, NULL);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_attr(dup, k1, base);
    MPI_Comm_set_attr(dup, k2, base + 1);
    MPI_Comm_set_attr(dup, k3, base + 2);
    MPI_Comm_set_attr(dup, k3, base + 5); /* replacing calls the delete callback */
    CHECK(deletes == 1, "delete on replace: %d", deletes);
    MPI_Comm dup2;
    MPI_Comm_dup(dup, &dup2);
    void *v;
    MPI_Comm_get_attr(dup2, k1, &v, &flag);
    CHECK(flag && v == base + 3 && copies == 1, "copied attribute %p (%d copies)", v, copies);
    MPI_Comm_get_attr(dup2, k2, &v, &flag);
    CHECK(flag && v == base + 1, "MPI_COMM_DUP_FN copy");
    MPI_Comm_get_attr(dup2, k3, &v, &flag);
    CHECK(!flag, "MPI_COMM_NULL_COPY_FN does not copy");
    MPI_Comm_delete_attr(dup2, k1);
    CHECK(deletes == 2, "delete_attr: %d", deletes);
    CHECK_CLASS(MPI_Comm_delete_attr(dup2, k1), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&k1); /* attributes keep it alive */
    CHECK(k1 == MPI_KEYVAL_INVALID, "free_keyval nulls");
    MPI_Comm_free(&dup); /* deletes k1 and k3 values */
    CHECK(deletes == 4, "deletes on free: %d", deletes);
    MPI_Comm_free(&dup2);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, base), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 0x12345, &v, &flag), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&k2);
    MPI_Comm_free_keyval(&k3);

    /* Comm_create and Comm_create_group with the upper half. */
    MPI_Group world_group, upper;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int half = size / 2, range[1][3] = {{half, size - 1, 1}};
    MPI_Group_range_incl(world_group, 1, range, &upper);
    MPI_Comm c1, c2 = MPI_COMM_NULL;
    MPI_Comm_create(MPI_COMM_WORLD, upper, &c1);
    if (rank >= half) {
        MPI_Comm_create_group(MPI_COMM_WORLD, upper, 5, &c2);
        int r1, r2, s1;
        MPI_Comm_rank(c1, &r1);
        MPI_Comm_rank(c2, &r2);
        MPI_Comm_size(c1, &s1);
        CHECK(r1 == rank - half && r2 == r1 && s1 == size - half, "create ranks %d %d size %d", r1, r2, s1);
        MPI_Comm_compare(c1, c2, &result);
        CHECK(result == MPI_CONGRUENT, "create vs create_group %d", result);
        MPI_Barrier(c1);
        MPI_Barrier(c2);
        MPI_Comm_free(&c1);
        MPI_Comm_free(&c2);
    } else {
        CHECK(c1 == MPI_COMM_NULL, "non-members get MPI_COMM_NULL");
    }

    /* Split by node. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    CHECK(nsize == size, "one node: shared size %d", nsize);
    MPI_Comm_free(&node);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node);
    CHECK(node == MPI_COMM_NULL, "MPI_UNDEFINED split type");
    /* Hardware types: the node's shared memory is the one resource known;
     * without the key, or for another resource, MPI_COMM_NULL; unguided on
     * one node has no strict subset to give. */
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &node);
    CHECK(node == MPI_COMM_NULL, "HW_GUIDED without info");
    MPI_Info hw;
    MPI_Info_create(&hw);
    MPI_Info_set(hw, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hw, &node);
    CHECK(node != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
    if (node != MPI_COMM_NULL) {
        MPI_Comm_size(node, &nsize);
        CHECK(nsize == size, "HW_GUIDED mpi_shared_memory: size %d", nsize);
        MPI_Comm_free(&node);
    }
    MPI_Info_set(hw, "mpi_hw_resource_type", "hwloc://L3Cache");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, hw, &node);
    CHECK(node == MPI_COMM_NULL, "HW_GUIDED on an unknown resource");
    MPI_Info_free(&hw);
    MPI_Info_create(&hw);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, hw, &node);
    CHECK(node == MPI_COMM_NULL, "HW_UNGUIDED on one node: no strict subset");
    MPI_Info_free(&hw);

    /* Info hints, idup. */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup);
    MPI_Comm_get_info(dup, &used);
    char value[64];
    int len = sizeof value;
    MPI_Info_get_string(used, "mpi_assert_no_any_tag", &len, value, &flag);
    CHECK(flag && !strcmp(value, "true"), "comm info");
    MPI_Info_free(&used);
    /* Keys oxmpi does not use are ignored (as in MPICH): not kept. */
    MPI_Info_set(info, "invalid_test_key", "true");
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Comm_set_info(dup, info);
    MPI_Comm_get_info(dup, &used);
    len = sizeof value;
    MPI_Info_get_string(used, "invalid_test_key", &len, value, &flag);
    CHECK(!flag, "an unknown key was kept");
    len = sizeof value;
    MPI_Info_get_string(used, "mpi_assert_no_any_source", &len, value, &flag);
    CHECK(flag && !strcmp(value, "true"), "mpi_assert_no_any_source was not kept");
    MPI_Info_free(&used);
    MPI_Info_free(&info);
    MPI_Request rq;
    MPI_Comm idup;
    MPI_Comm_idup(dup, &idup, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Comm_compare(dup, idup, &result);
    CHECK(result == MPI_CONGRUENT, "idup compare %d", result);
    MPI_Comm_free(&idup);
    MPI_Comm_free(&dup);

    /* Intercommunicator between the lower and upper halves. */
    if (size >= 2) {
        MPI_Comm local, inter, merged;
        int color = rank >= half;
        MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
        int remote_leader = color ? 0 : half;
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, remote_leader, 42, &inter);
        int is_inter, rsize, lrank;
        MPI_Comm_test_inter(inter, &is_inter);
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_rank(inter, &lrank);
        CHECK(is_inter && rsize == (color ? half : size - half), "inter %d remote size %d", is_inter, rsize);
        /* Each rank of the lower group talks to the same rank of the upper. */
        int partner = lrank, got = -1, mine = rank;
        if (partner < rsize) {
            MPI_Sendrecv(&mine, 1, MPI_INT, partner, 9, &got, 1, MPI_INT, partner, 9, inter, MPI_STATUS_IGNORE);
            int expect = color ? partner : half + partner;
            CHECK(got == expect, "intercomm message %d expected %d", got, expect);
        }
        MPI_Group rg;
        MPI_Comm_remote_group(inter, &rg);
        int rgsize;
        MPI_Group_size(rg, &rgsize);
        CHECK(rgsize == rsize, "remote group size %d", rgsize);
        MPI_Group_free(&rg);
        MPI_Intercomm_merge(inter, color, &merged);
        int mrank, msize;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        CHECK(msize == size && mrank == rank, "merged rank %d size %d", mrank, msize);
        MPI_Barrier(merged);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    /* Bad input. */
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_WORLD, (MPI_Group)0x1234, &c1), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_split_type(MPI_COMM_WORLD, 77, 0, MPI_INFO_NULL, &c1), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &flag), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Group_incl(world_group, 1, &size, &upper), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Comm_free(&(MPI_Comm){MPI_COMM_WORLD}), MPI_ERR_COMM);
    MPI_Group_free(&upper);
    MPI_Group_free(&world_group);

    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
