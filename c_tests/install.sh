#!/bin/bash
# `make install PREFIX=<dir>` gives the documented layout, and a program
# built with the installed mpicc (or with pkg-config's flags) runs under the
# installed mpiexec/mpirun and as a singleton.
set -u
ROOT=${OXMPI_ROOT:?}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
errors=0
fail() { echo "not ok - $*"; errors=$((errors + 1)); }
make -s -C "$ROOT" install PREFIX="$dir/p" > "$dir/log" 2>&1 || { cat "$dir/log"; fail "make install"; }
p=$dir/p
for f in lib/liboxmpi.so lib/libmpi.so lib/libmpi.so.12 lib/libmpich.so lib/libmpich.so.12 include/mpi.h \
         bin/mpicc bin/mpiexec bin/mpirun lib/pkgconfig/oxmpi.pc lib/pkgconfig/mpi.pc lib/pkgconfig/mpi-c.pc; do
    [ -e "$p/$f" ] || fail "$f missing"
done
for l in libmpi.so libmpi.so.12 libmpich.so libmpich.so.12; do
    [ "$(readlink "$p/lib/$l")" = liboxmpi.so ] || fail "$l is not a link to liboxmpi.so"
done
cat > "$dir/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("hello from rank %d of %d\n", rank, size);
    MPI_Finalize();
    return 0;
}
C
show=$("$p/bin/mpicc" -show "$dir/hello.c" -o "$dir/hello")
case "$show" in *"-I$p/include"*"-L$p/lib"*"-lmpi"*) echo "ok - mpicc -show: $show" ;; *) fail "mpicc -show: $show" ;; esac
"$p/bin/mpicc" "$dir/hello.c" -o "$dir/hello" || fail "mpicc hello.c"
out=$(timeout 30 "$p/bin/mpiexec" -n 4 "$dir/hello" | sort)
expected=$(printf 'hello from rank %d of 4\n' 0 1 2 3)
[ "$out" = "$expected" ] && echo "ok - mpiexec -n 4 ./hello" || fail "mpiexec -n 4 printed: $out"
out=$(timeout 30 "$p/bin/mpirun" -np 2 "$dir/hello" | sort)
[ "$out" = "$(printf 'hello from rank %d of 2\n' 0 1)" ] && echo "ok - mpirun -np 2" || fail "mpirun printed: $out"
out=$(timeout 30 "$dir/hello")
[ "$out" = "hello from rank 0 of 1" ] && echo "ok - singleton" || fail "singleton printed: $out"
if command -v pkg-config > /dev/null; then
    flags=$(PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags --libs mpi-c)
    cc "$dir/hello.c" -o "$dir/hello2" $flags && out=$("$dir/hello2") && [ "$out" = "hello from rank 0 of 1" ] \
        && echo "ok - pkg-config mpi-c: $flags" || fail "pkg-config build: $flags"
else
    echo "# pkg-config not installed; pkg-config check skipped"
fi
ldd "$dir/hello" | grep -q "libmpi.so.12 => $p/lib/libmpi.so.12" && echo "ok - hello links libmpi.so.12 from the prefix" \
    || fail "ldd: $(ldd "$dir/hello" | grep mpi)"
[ "$errors" = 0 ] && { echo "No Errors"; exit 0; }
exit 1
