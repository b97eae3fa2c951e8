#!/usr/bin/env bash
# Installs the C ABI under PREFIX: lib/libcommcost_capi.{so,a}, include/commcost.h,
# include/commcost.f90 (the Fortran module's source) and lib/pkgconfig/commcost-capi.pc.
#   capi/install.sh PREFIX      (builds with `cargo build --release -p commcost-capi` first)
# then: cc prog.c $(PKG_CONFIG_PATH=PREFIX/lib/pkgconfig pkg-config --cflags --libs commcost-capi)
set -euo pipefail
if [ $# -ne 1 ]; then echo "usage: $0 PREFIX" >&2; exit 2; fi
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
mkdir -p "$1"
prefix="$(cd "$1" && pwd)"
(cd "$root" && cargo build --release --quiet -p commcost-capi)
target="${CARGO_TARGET_DIR:-$root/target}/release"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$here/Cargo.toml" | head -n 1)"
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
cp "$target/libcommcost_capi.so" "$target/libcommcost_capi.a" "$prefix/lib/"
cp "$here/include/commcost.h" "$here/fortran/commcost.f90" "$prefix/include/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "$here/commcost-capi.pc.in" \
  > "$prefix/lib/pkgconfig/commcost-capi.pc"
# the Fortran module compiled, where gfortran is installed: include/commcost.mod and
# lib/libcommcost_fortran.a (the module's own procedures), so a program needs only `use commcost`
if command -v gfortran >/dev/null 2>&1; then
  scratch="$(mktemp -d)"
  trap 'rm -rf "$scratch"' EXIT
  gfortran -O2 -c "$here/fortran/commcost.f90" -J "$scratch" -o "$scratch/commcost.o"
  cp "$scratch/commcost.mod" "$prefix/include/"
  rm -f "$prefix/lib/libcommcost_fortran.a"
  ar rcs "$prefix/lib/libcommcost_fortran.a" "$scratch/commcost.o"
fi
echo "installed commcost-capi $version under $prefix"
