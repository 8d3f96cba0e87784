#!/usr/bin/env bash
# The OpenMPI runtime that the `mpi` feature was built against, packed for a machine without it.
#
#   here:   bash scripts/mpi_bundle.sh pack OUT.tar.xz   (scripts/gpu.sh build calls it)
#   there:  source scripts/mpi_bundle.sh use OUT.tar.xz   (scripts/gpu.sh run calls it)
#
# The GPU machines have no MPI of their own that clreduce could rely on (and nothing can be
# installed there), so the bundle carries Debian 12's OpenMPI 4.1 as scripts/setup.sh installs
# it here: orterun (mpirun), libmpi and the libraries it and its plugins load (glibc aside), the
# MCA plugins, the help texts and PMIx's plugins. `use` unpacks it under /tmp/ompi and points
# OpenMPI at it through its relocation variables (OPAL_PREFIX and friends), so the rsmpi build
# (linked against libmpi.so.40) and mpirun find it. Nothing outside /tmp is touched.
set -euo pipefail

ompi_lib=/usr/lib/x86_64-linux-gnu/openmpi/lib
pmix_lib=/usr/lib/x86_64-linux-gnu/pmix2/lib

pack() {
  local out="$1" dir
  command -v orterun >/dev/null || { echo "mpi_bundle: orterun not found (run scripts/setup.sh)" >&2; return 2; }
  dir="$(mktemp -d)"
  mkdir -p "$dir/ompi/bin" "$dir/ompi/lib/openmpi" "$dir/ompi/share" "$dir/ompi/pmix"
  cp "$(readlink -f "$(command -v orterun)")" "$dir/ompi/bin/orterun"
  ln -s orterun "$dir/ompi/bin/mpirun"
  cp -a "$ompi_lib/openmpi3" "$dir/ompi/lib/openmpi/"
  cp -a "$pmix_lib/pmix/." "$dir/ompi/pmix/"
  cp -a /usr/share/openmpi "$dir/ompi/share/"
  [ -d /usr/share/pmix ] && cp -a /usr/share/pmix "$dir/ompi/share/"
  # Every shared library orterun, libmpi and the plugins load, but glibc's own.
  ldd "$dir/ompi/bin/orterun" /usr/lib/x86_64-linux-gnu/libmpi.so.40 "$dir"/ompi/lib/openmpi/openmpi3/*.so \
    "$dir"/ompi/pmix/*.so 2>/dev/null | awk '/=>/ {print $1, $3}' | sort -u |
    while read -r soname path; do
      case "$soname" in libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) continue ;; esac
      [ -f "$path" ] && cp -L "$path" "$dir/ompi/lib/$soname"
    done
  tar -C "$dir" -cJf "$out" ompi
  rm -rf "$dir"
  echo "mpi_bundle: $(du -h "$out" | cut -f1) in $out"
}

use() {
  local tarball="$1" root=/tmp/ompi
  [ -f "$tarball" ] || { echo "mpi_bundle: no $tarball" >&2; return 2; }
  if [ ! -x "$root/bin/orterun" ]; then
    mkdir -p /tmp && tar -C /tmp -xJf "$tarball"
  fi
  export PATH="$root/bin:$PATH"
  export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export OPAL_PREFIX="$root" OPAL_BINDIR="$root/bin" OPAL_LIBDIR="$root/lib"
  export OPAL_PKGLIBDIR="$root/lib/openmpi/openmpi3" OPAL_DATAROOTDIR="$root/share"
  export OPAL_DATADIR="$root/share" OPAL_PKGDATADIR="$root/share/openmpi"
  export OPAL_SYSCONFDIR="$root/etc"
  export PMIX_MCA_mca_base_component_path="$root/pmix" PMIX_INSTALL_PREFIX="$root"
  # A machine with its own PMIx (Ubuntu's libpmix2) has plugins of another version in the
  # compiled-in path: PMIx skips them with a warning, and warns again that it found no zlib.
  export PMIX_MCA_pcompress_base_silence_warning=1 PMIX_MCA_mca_base_component_show_load_errors=0
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Shared memory and loopback TCP only: one host, no fabric libraries to probe.
  export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_mtl=^ofi,psm,psm2
  export OMPI_MCA_osc=^ucx
}

case "${1:-}" in
pack) pack "$2" ;;
use) use "$2" ;;
*) echo "usage: scripts/mpi_bundle.sh pack OUT.tar.xz | source scripts/mpi_bundle.sh use OUT.tar.xz" >&2; return 2 2>/dev/null || exit 2 ;;
esac
