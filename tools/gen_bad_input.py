#!/usr/bin/env python3
"""Writes a C program that calls every implemented MPI function of the
function table (src/abi/mpi_functions.txt), in each of its forms, once per
argument that can be made invalid, with that one argument invalid and every
other one harmless, and checks the error class each call returns under
MPI_ERRORS_RETURN (and that none crashes or hangs: c_tests/bad_input.sh runs
it under a time limit).

The C types come from the generated header (include/mpi.h), the parameter
kinds (count, tag, out T...) from the table, so neither is written twice.

Invalid arguments and the class each must give:
- a garbage integer, the null handle (where null is not allowed), a freed
  handle and a handle of another kind for a by-value handle parameter: its
  object's class (MPI_ERR_COMM, MPI_ERR_TYPE, MPI_ERR_GROUP, MPI_ERR_OP,
  MPI_ERR_INFO, MPI_ERR_SESSION, MPI_ERR_REQUEST; an error handler:
  MPI_ERR_ARG);
- an uncommitted datatype describing a buffer: MPI_ERR_TYPE;
- -1 for a `count`: MPI_ERR_COUNT; -5 for a `tag`/`any_tag`: MPI_ERR_TAG;
- NULL for an `out T`: MPI_ERR_ARG;
- 1000 for a destination or source rank: MPI_ERR_RANK; for a root:
  MPI_ERR_ROOT;
- a pointer to a garbage request for the calls that complete or start a
  request (MPI_Wait...): MPI_ERR_REQUEST.

    tools/gen_bad_input.py TABLE HEADER > bad_input.c
"""
import re
import sys

# Calls not made: they start or end MPI, end the job, or are the tool
# interface (MPI_T_* returns codes of its own, without error handlers).
SKIP = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Abort"}

HANDLES = {
    "MPI_Comm": ("MPI_COMM_SELF", "((MPI_Comm)0x2bad0001)", "MPI_ERR_COMM"),
    "MPI_Datatype": ("MPI_INT", "((MPI_Datatype)0x2bad0002)", "MPI_ERR_TYPE"),
    "MPI_Group": ("MPI_GROUP_EMPTY", "((MPI_Group)0x2bad0003)", "MPI_ERR_GROUP"),
    "MPI_Op": ("MPI_SUM", "((MPI_Op)0x2bad0004)", "MPI_ERR_OP"),
    "MPI_Info": ("MPI_INFO_NULL", "((MPI_Info)0x2bad0005)", "MPI_ERR_INFO"),
    "MPI_Errhandler": ("MPI_ERRORS_RETURN", "((MPI_Errhandler)0x2bad0006)", "MPI_ERR_ARG"),
    "MPI_Session": ("session", "((MPI_Session)0x2bad0007)", "MPI_ERR_SESSION"),
    "MPI_Request": ("MPI_REQUEST_NULL", "((MPI_Request)0x2bad0008)", "MPI_ERR_REQUEST"),
    "MPI_Message": ("MPI_MESSAGE_NULL", None, None),
    "MPI_Win": ("MPI_WIN_NULL", None, None),
    "MPI_File": ("file", "((MPI_File)0x2bad0009)", "MPI_ERR_FILE"),
}

# More invalid values of a by-value handle parameter, each (what, C
# expression), with the class of the garbage value: the null handle (where
# null is not a valid argument: MPI_INFO_NULL and MPI_REQUEST_NULL are),
# a handle freed at the start of main (FREED_SETUP; oxmpi reuses a freed
# slot only after every older free one, a datatype's at once, and every
# call here fails, so nothing takes it), and a valid handle of another kind.
MORE_BAD = {
    "MPI_Comm": [("null", "MPI_COMM_NULL"), ("freed", "freed_comm"), ("wrong-kind", "((MPI_Comm)MPI_INT)")],
    "MPI_Datatype": [
        ("null", "MPI_DATATYPE_NULL"),
        ("freed", "freed_type"),
        ("wrong-kind", "((MPI_Datatype)MPI_COMM_WORLD)"),
    ],
    "MPI_Group": [("null", "MPI_GROUP_NULL"), ("freed", "freed_group"), ("wrong-kind", "((MPI_Group)MPI_COMM_SELF)")],
    "MPI_Op": [("null", "MPI_OP_NULL"), ("freed", "freed_op"), ("wrong-kind", "((MPI_Op)MPI_INT)")],
    "MPI_Info": [("freed", "freed_info"), ("wrong-kind", "((MPI_Info)MPI_COMM_WORLD)")],
    "MPI_Errhandler": [
        ("null", "MPI_ERRHANDLER_NULL"),
        ("freed", "freed_errhandler"),
        ("wrong-kind", "((MPI_Errhandler)MPI_COMM_WORLD)"),
    ],
    "MPI_Session": [
        ("null", "MPI_SESSION_NULL"),
        ("freed", "freed_session"),
        ("wrong-kind", "((MPI_Session)MPI_COMM_WORLD)"),
    ],
    "MPI_Request": [("wrong-kind", "((MPI_Request)MPI_COMM_WORLD)")],
    "MPI_File": [
        ("null", "MPI_FILE_NULL"),
        ("freed", "freed_file"),
        ("wrong-kind", "((MPI_File)(intptr_t)MPI_COMM_WORLD)"),
    ],
}
# Calls for which the null handle is a valid argument: MPI_FILE_NULL
# carries the error handler of files opened later.
NULL_OK = {"MPI_File_set_errhandler", "MPI_File_get_errhandler", "MPI_File_call_errhandler"}
FREED_SETUP = """\
static MPI_Comm freed_comm;
static MPI_Datatype freed_type, uncommitted_type;
static MPI_Group freed_group;
static MPI_Op freed_op;
static MPI_Info freed_info;
static MPI_Errhandler freed_errhandler;
static MPI_Session freed_session;
static MPI_File file, freed_file;
static char file_name[600];
static void no_op(void *in, void *inout, int *len, MPI_Datatype *type) {
    (void)in; (void)inout; (void)len; (void)type;
}
static void no_handler(MPI_Comm *comm, int *code, ...) { (void)comm; (void)code; }
/* One handle of each kind, freed (the variable keeps the old value), and
 * a datatype never committed. */
static void make_bad_handles(void) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    freed_comm = c;
    MPI_Comm_free(&c);
    /* The uncommitted type first: datatype handles reuse the latest freed
     * one at once, so nothing may be created after freed_type is freed. */
    MPI_Type_contiguous(2, MPI_INT, &uncommitted_type);
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    MPI_Type_commit(&t);
    freed_type = t;
    MPI_Type_free(&t);
    MPI_Group g;
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    freed_group = g;
    MPI_Group_free(&g);
    MPI_Op o;
    MPI_Op_create(no_op, 1, &o);
    freed_op = o;
    MPI_Op_free(&o);
    MPI_Info i;
    MPI_Info_create(&i);
    freed_info = i;
    MPI_Info_free(&i);
    MPI_Errhandler e;
    MPI_Comm_create_errhandler(no_handler, &e);
    freed_errhandler = e;
    MPI_Errhandler_free(&e);
    MPI_Session s;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    freed_session = s;
    MPI_Session_finalize(&s);
    /* A scratch file of this process (removed when it is closed). */
    MPI_File f;
    const char *tmp = getenv("TMPDIR");
    snprintf(file_name, sizeof file_name, "%s/oxmpi-bad-input-%d", tmp && *tmp ? tmp : "/tmp",
             (int)getpid());
    MPI_File_open(MPI_COMM_SELF, file_name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &f);
    freed_file = f;
    MPI_File_close(&f);
    MPI_File_open(MPI_COMM_SELF, file_name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &file);
}
"""
# Datatype parameters that describe a buffer's data, which must be
# committed (MPI_ERR_TYPE otherwise) in a call that has a buffer.
BUFFER_TYPES = {"datatype", "sendtype", "recvtype"}

# Calls whose request argument names a request to complete, start or free.
REQUEST_USERS = {
    "MPI_Wait", "MPI_Test", "MPI_Cancel", "MPI_Request_free", "MPI_Start",
    "MPI_Request_get_status", "MPI_Grequest_complete",
}

# Known differences from the rule, each with its reason.
SHAPE_FIRST = ("MPI_ERR_ARG", "the shape (ndims 0, here) is checked before the old type")
EXCEPTIONS = {
    ("MPI_Type_create_darray", "oldtype"): SHAPE_FIRST,
    ("MPI_Type_create_darray_c", "oldtype"): SHAPE_FIRST,
    ("MPI_Type_create_subarray", "oldtype"): SHAPE_FIRST,
    ("MPI_Type_create_subarray_c", "oldtype"): SHAPE_FIRST,
}


def split_params(s):
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "[(":
            depth += 1
        if ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def table_entries(path):
    """(name, {param: kind}) of every implemented entry, in both forms."""
    out = []
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith("#") or " = " not in line:
            continue
        declared = line[: line.index("(")].strip()
        inner = line[line.index("(") + 1 : line.rindex(")")]
        kinds = {}
        for p in split_params(inner):
            if p == "...":
                continue
            name, kind = p.split(":", 1)
            kinds[name.strip()] = kind.strip()
        if declared.endswith("[_c]"):
            base = declared[: -len("[_c]")]
            out.append((base, kinds))
            out.append((base + "_c", kinds))
        else:
            out.append((declared, kinds))
    return out


def prototypes(path):
    """name -> [(C type, param name)] from the header's one-line prototypes."""
    protos = {}
    for line in open(path):
        m = re.match(r"^(int|double|MPI_Aint|MPI_Fint|MPI_File) (MPI_\w+|MPIX_\w+)\((.*)\);$", line.strip())
        if not m:
            continue
        params = []
        for p in split_params(m.group(3)):
            if p == "void" or p == "...":
                continue
            arr = re.match(r"^(\w+) \(\*(\w+)\)\[(\d+)\]$", p)
            if arr:  # int (*ranges)[3]
                params.append((f"{arr.group(1)} (*)[{arr.group(3)}]", arr.group(2)))
                continue
            pm = re.match(r"^(.*?)(\w+)$", p)
            params.append((pm.group(1).strip(), pm.group(2)))
        protos[m.group(2)] = (m.group(1), params)
    return protos


def default(ctype, kind, name):
    """A harmless value for a parameter."""
    if name == "datarep":
        return '"external32"'
    if kind in ("count", "large_int"):
        return "1"
    if ctype in HANDLES:
        return HANDLES[ctype][0]
    if ctype in ("int", "MPI_Count", "MPI_Aint", "MPI_Offset", "MPI_Fint"):
        return "0"
    if ctype == "const char *":
        return '"x"'
    if ctype == "char *":
        return "text"
    if ctype.endswith("*") or ctype.endswith("]"):
        return f"(({ctype})scratch)"
    # Callback types are function types: the parameter is a pointer.
    return "NULL"


def mutations(fname, params, kinds):
    """(param, invalid value, expected class) for each parameter that can
    be made invalid."""
    for ctype, name in params:
        kind = kinds.get(name, "")
        if ctype in HANDLES and HANDLES[ctype][1]:
            yield name, HANDLES[ctype][1], HANDLES[ctype][2]
            for what, value in MORE_BAD.get(ctype, []):
                if what == "null" and fname in NULL_OK:
                    continue
                yield f"{name} ({what})", value, HANDLES[ctype][2]
            has_buffer = any("buf" in n for _, n in params)
            if ctype == "MPI_Datatype" and name in BUFFER_TYPES and has_buffer:
                yield f"{name} (uncommitted)", "uncommitted_type", "MPI_ERR_TYPE"
        elif kind == "count":
            yield name, "-1", "MPI_ERR_COUNT"
        elif kind in ("tag", "any_tag"):
            yield name, "-5", "MPI_ERR_TAG"
        elif kind.startswith("out "):
            yield name, "NULL", "MPI_ERR_ARG"
            base = fname[:-2] if fname.endswith("_c") else fname
            if kind == "out MPI_Request" and base in REQUEST_USERS:
                yield name, "&bad_request", "MPI_ERR_REQUEST"
        elif ctype == "int" and name in ("dest", "source"):
            yield name, "1000", "MPI_ERR_RANK"
        elif ctype == "int" and name == "root":
            yield name, "1000", "MPI_ERR_ROOT"


def main():
    table, header = sys.argv[1], sys.argv[2]
    protos = prototypes(header)
    calls = []
    for fname, kinds in table_entries(table):
        if fname in SKIP or fname.startswith("MPI_T_"):
            continue
        if fname not in protos:
            sys.exit(f"gen_bad_input: {fname} has no prototype in {header}")
        ret, params = protos[fname]
        if ret != "int":
            continue
        for pname, value, expected in mutations(fname, params, kinds):
            target = pname.split(" ")[0]
            args = [value if n == target else default(t, kinds.get(n, ""), n) for t, n in params]
            expected = EXCEPTIONS.get((fname, target), (expected,))[0]
            calls.append((fname, pname, f"{fname}({', '.join(args)})", expected))
    print("/* Generated by tools/gen_bad_input.py from the function table. */")
    print('#include "mpitest.h"')
    print("static _Alignas(64) char scratch[1 << 16];")
    print("static char text[4096];")
    print("static MPI_Session session;")
    print("static MPI_Request bad_request = (MPI_Request)0x2bad0008;")
    print("static int checked, wrong;")
    print(FREED_SETUP)
    print("static void expect(const char *call, const char *param, int rc, int expected, const char *name) {")
    print("    int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc);")
    print("    checked++;")
    print("    if (cls != expected) {")
    print('        printf("%s with an invalid %s: class %d, expected %s (%d)\\n", call, param, cls, name, expected);')
    print("        wrong++;")
    print("    }")
    print("}")
    print("int main(int argc, char **argv) {")
    print("    int rank, size;")
    print("    mt_init(&argc, &argv, &rank, &size);")
    print("    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);")
    print("    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);")
    print("    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);")
    print("    make_bad_handles();")
    for fname, pname, call, expected in calls:
        print(f'    memset(scratch, 0, sizeof scratch);')
        print(f'    fprintf(stderr, "{fname} {pname}\\n");')
        print(f'    expect("{fname}", "{pname}", {call}, {expected}, "{expected}");')
    print("    MPI_Type_free(&uncommitted_type);")
    print("    MPI_File_close(&file);")
    print("    MPI_Session_finalize(&session);")
    print('    printf("rank %d: %d calls with an invalid argument, %d gave another class\\n", rank, checked, wrong);')
    print("    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);")
    print("    MPI_Finalize();")
    print("    mt_report(rank, wrong);")
    print("    return wrong ? 1 : 0;")
    print("}")


if __name__ == "__main__":
    main()
