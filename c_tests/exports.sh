#!/bin/bash
# Every MPI_x and PMPI_x function libmpich.so.12 exports is exported by
# liboxmpi.so (c_tests/data/libmpich-exported-functions.txt, from Debian
# MPICH 4.0.2), plus MPIR_Dup_fn, the MPII_* helpers libmpichfort.so.12
# calls, and the data symbols with MPICH's sizes;
# the library's SONAME is libmpi.so.12.
set -u
PREFIX=${OXMPI_PREFIX:?}
ROOT=${OXMPI_ROOT:-$(dirname "$0")/..}
lib=$PREFIX/lib/liboxmpi.so
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
nm -D -S --defined-only "$lib" > "$syms"
errors=0
missing=0
while read -r kind name; do
    case "$kind" in W|T) ;; *) continue ;; esac
    case "$name" in MPI_*|MPIX_*) ;; *) continue ;; esac
    for sym in "$name" "P$name"; do
        if ! grep -q " T $sym\$" "$syms"; then
            [ "$missing" -lt 20 ] && echo "not ok - $sym is not exported"
            missing=$((missing + 1))
        fi
    done
done < <(grep -v '^#' "$ROOT/c_tests/data/libmpich-exported-functions.txt")
[ "$missing" = 0 ] && echo "ok - every MPI_/PMPI_ function is exported" || errors=$((errors + 1))
grep -q " T MPIR_Dup_fn\$" "$syms" && echo "ok - MPIR_Dup_fn" || { echo "not ok - MPIR_Dup_fn missing"; errors=$((errors + 1)); }
# The internal helpers MPICH's Fortran binding (libmpichfort.so.12) calls.
for sym in MPII_Comm_get_attr MPII_Comm_set_attr MPII_Type_get_attr MPII_Type_set_attr \
           MPII_Win_get_attr MPII_Win_set_attr MPII_Keyval_set_proxy MPII_Grequest_set_lang_f77; do
    grep -q " T $sym\$" "$syms" && echo "ok - $sym" || { echo "not ok - $sym missing"; errors=$((errors + 1)); }
done
for pair in MPI_UNWEIGHTED:8 MPI_WEIGHTS_EMPTY:8 MPI_F_STATUS_IGNORE:8 MPI_F_STATUSES_IGNORE:8 \
            MPI_F08_STATUS_IGNORE:8 MPI_F08_STATUSES_IGNORE:8 MPI_T_PVAR_ALL_HANDLES:8 \
            MPIR_F08_MPI_STATUS_IGNORE_OBJ:20 MPIR_F08_MPI_STATUSES_IGNORE_OBJ:20 \
            MPIR_F08_MPI_IN_PLACE:4 MPIR_F08_MPI_BOTTOM:4; do
    name=${pair%%:*}; size=${pair##*:}
    line=$(grep -E " [BDR] $name\$" "$syms")
    got=$((16#$(echo "$line" | awk '{print $2}')))
    if [ -n "$line" ] && [ "$got" = "$size" ]; then echo "ok - data $name ($size bytes)"
    else echo "not ok - data $name: '$line' (want $size bytes)"; errors=$((errors + 1)); fi
done
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ "$soname" = libmpi.so.12 ] && echo "ok - SONAME $soname" || { echo "not ok - SONAME '$soname'"; errors=$((errors + 1)); }
[ "$errors" = 0 ] && { echo "No Errors"; exit 0; }
exit 1
