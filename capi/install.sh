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
echo "installed commcost-capi $version under $prefix"
