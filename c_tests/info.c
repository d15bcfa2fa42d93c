/* Info objects: every call, the length protocols of MPI_Info_get and
 * MPI_Info_get_string, dup independence, MPI_INFO_ENV (usable before
 * MPI_Init, read-only), and bad input (freed/NULL handles, long keys). */
#include "mpitest.h"

int main(int argc, char **argv) {
    MPI_Info info, copy;
    int flag, nkeys, len, rank = 0;
    char value[MPI_MAX_INFO_VAL + 1], key[MPI_MAX_INFO_KEY + 1];

    /* Info calls work before MPI_Init (MPI 4.0). */
    CHECK(MPI_Info_create(&info) == MPI_SUCCESS, "create before init");
    MPI_Info_set(info, "early", "bird");
    MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
    CHECK(nkeys >= 1, "MPI_INFO_ENV has %d keys", nkeys);
    len = sizeof value;
    MPI_Info_get_string(MPI_INFO_ENV, "command", &len, value, &flag);
    CHECK(flag && strstr(value, "info") != NULL, "INFO_ENV command '%s'", value);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Info_set(info, "alpha", "1");
    MPI_Info_set(info, "beta", "twenty two");
    MPI_Info_set(info, "alpha", "one"); /* overwrite keeps the position */
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 3, "nkeys %d", nkeys);
    MPI_Info_get_nthkey(info, 1, key);
    CHECK(strcmp(key, "alpha") == 0, "nthkey 1 '%s'", key);
    MPI_Info_get_nthkey(info, 2, key);
    CHECK(strcmp(key, "beta") == 0, "nthkey 2 '%s'", key);
    CHECK_CLASS(MPI_Info_get_nthkey(info, 3, key), MPI_ERR_ARG);

    MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK(flag == 1 && len == 10, "valuelen %d flag %d", len, flag);
    MPI_Info_get_valuelen(info, "gamma", &len, &flag);
    CHECK(flag == 0, "valuelen of a missing key: flag %d", flag);

    /* MPI_Info_get copies at most valuelen characters plus a NUL. */
    memset(value, 'x', sizeof value);
    MPI_Info_get(info, "beta", 6, value, &flag);
    CHECK(flag == 1 && strcmp(value, "twenty") == 0, "get truncated '%s'", value);
    MPI_Info_get(info, "gamma", 6, value, &flag);
    CHECK(flag == 0, "get missing flag %d", flag);

    /* get_string: buflen 0 asks for the length (NUL included). */
    len = 0;
    MPI_Info_get_string(info, "beta", &len, value, &flag);
    CHECK(flag == 1 && len == 11, "get_string length %d", len);
    len = 4;
    MPI_Info_get_string(info, "beta", &len, value, &flag);
    CHECK(flag == 1 && len == 11 && strcmp(value, "twe") == 0, "get_string short '%s' %d", value, len);
    len = sizeof value;
    MPI_Info_get_string(info, "alpha", &len, value, &flag);
    CHECK(strcmp(value, "one") == 0 && len == 4, "get_string '%s' %d", value, len);

    /* dup is independent of the original. */
    MPI_Info_dup(info, &copy);
    MPI_Info_delete(info, "alpha");
    MPI_Info_get_nkeys(copy, &nkeys);
    CHECK(nkeys == 3, "dup nkeys %d", nkeys);
    MPI_Info_get_nkeys(info, &nkeys);
    CHECK(nkeys == 2, "after delete nkeys %d", nkeys);
    CHECK_CLASS(MPI_Info_delete(info, "alpha"), MPI_ERR_INFO_NOKEY);

    /* Bad input. */
    char longkey[MPI_MAX_INFO_KEY + 2];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    CHECK_CLASS(MPI_Info_set(info, longkey, "v"), MPI_ERR_INFO_KEY);
    /* The longest key is accepted; MPI_Info_get_nthkey writes at most
     * MPI_MAX_INFO_KEY bytes, NUL included (a buffer of that size, as
     * programs declare it, holds the answer), as MPICH does. */
    longkey[MPI_MAX_INFO_KEY] = 0;
    MPI_Info longest;
    MPI_Info_create(&longest);
    CHECK_CLASS(MPI_Info_set(longest, longkey, "v"), MPI_SUCCESS);
    char fits[MPI_MAX_INFO_KEY + 1];
    memset(fits, 'Z', sizeof fits);
    MPI_Info_get_nthkey(longest, 0, fits);
    CHECK(fits[MPI_MAX_INFO_KEY] == 'Z' && strlen(fits) == MPI_MAX_INFO_KEY - 1,
          "nthkey of a %d-character key wrote past MPI_MAX_INFO_KEY bytes (length %zu)", MPI_MAX_INFO_KEY,
          strlen(fits));
    MPI_Info_free(&longest);
    CHECK_CLASS(MPI_Info_set(info, NULL, "v"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Info_set(MPI_INFO_NULL, "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_set(MPI_INFO_ENV, "k", "v"), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_free(&(MPI_Info){MPI_INFO_ENV}), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_get_nkeys(info, NULL), MPI_ERR_ARG);

    MPI_Info freed = copy;
    MPI_Info_free(&copy);
    CHECK(copy == MPI_INFO_NULL, "free sets MPI_INFO_NULL");
    CHECK_CLASS(MPI_Info_get_nkeys(freed, &nkeys), MPI_ERR_INFO);
    CHECK_CLASS(MPI_Info_free(&freed), MPI_ERR_INFO);
    MPI_Info_free(&info);

    /* MPI_Info_create_env: a writable copy of the environment's info, or
     * one naming the command and arguments given. */
    MPI_Info env;
    CHECK(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS, "MPI_Info_create_env");
    len = sizeof value;
    MPI_Info_get_string(env, "command", &len, value, &flag);
    CHECK(flag && strstr(argv[0], value) != NULL, "create_env command '%s' (argv[0] %s)", value, argv[0]);
    CHECK(MPI_Info_set(env, "k", "v") == MPI_SUCCESS, "the created info is writable");
    MPI_Info_free(&env);
    char *words[] = {"prog", "-a", "b", NULL};
    MPI_Info_create_env(3, words, &env);
    len = sizeof value;
    MPI_Info_get_string(env, "command", &len, value, &flag);
    CHECK(flag && !strcmp(value, "prog"), "create_env(argv) command '%s'", value);
    len = sizeof value;
    MPI_Info_get_string(env, "argv", &len, value, &flag);
    CHECK(flag && !strcmp(value, "-a b"), "create_env(argv) argv '%s'", value);
    MPI_Info_free(&env);

    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
