#!/usr/bin/env bash
# Installs the OpenCL devices clreduce is tested on, idempotently, and registers them in a
# project-local ICD vendors folder (.opencl/vendors). Nothing outside the repository is edited
# except Debian packages installed through apt-get.
#
#   PoCL            Debian pocl-opencl-icd + ocl-icd-opencl-dev (+ clinfo for cross-checking)
#   Oclgrind        Debian oclgrind
#   Intel CPU RT    PyPI intel-opencl-rt + intel-cmplr-lib-rt, `pip install --prefix .opencl/intel`
#   OpenMPI         Debian openmpi-bin + libopenmpi-dev, and libclang-dev for the bindgen of the
#                   `mpi` crate (rsmpi): the cargo feature `mpi` and its tests (tests/mpi.rs)
#
# Afterwards:  export OCL_ICD_VENDORS="$PWD/.opencl/vendors"   (scripts/env.sh does this)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cl="$root/.opencl"
vendors="$cl/vendors"
mkdir -p "$vendors"

need_apt=()
dpkg -s pocl-opencl-icd >/dev/null 2>&1 || need_apt+=(pocl-opencl-icd)
dpkg -s ocl-icd-opencl-dev >/dev/null 2>&1 || need_apt+=(ocl-icd-opencl-dev)
dpkg -s ocl-icd-libopencl1 >/dev/null 2>&1 || need_apt+=(ocl-icd-libopencl1)
dpkg -s clinfo >/dev/null 2>&1 || need_apt+=(clinfo)
dpkg -s oclgrind >/dev/null 2>&1 || need_apt+=(oclgrind)
# MPI (feature `mpi`): mpirun and mpicc from OpenMPI; rsmpi's build runs bindgen on mpi.h.
dpkg -s openmpi-bin >/dev/null 2>&1 || need_apt+=(openmpi-bin)
dpkg -s libopenmpi-dev >/dev/null 2>&1 || need_apt+=(libopenmpi-dev)
dpkg -s libclang-dev >/dev/null 2>&1 || need_apt+=(libclang-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}" >&2
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

# PoCL: the Debian package's library, found through its own .icd file.
pocl_lib="$(sed -n 1p /etc/OpenCL/vendors/pocl.icd 2>/dev/null || true)"
[ -n "$pocl_lib" ] || pocl_lib="libpocl.so.2"
echo "$pocl_lib" > "$vendors/pocl.icd"

# Oclgrind: the simulator's ICD library.
echo "/usr/lib/oclgrind/liboclgrind-rt-icd.so" > "$vendors/oclgrind.icd"

# Intel CPU runtime, into a project-local prefix (--target would drop the shared libraries).
intel="$cl/intel"
if ! ls "$intel"/lib/libintelocl.so* >/dev/null 2>&1; then
  echo "setup: pip install intel-opencl-rt intel-cmplr-lib-rt into $intel" >&2
  python3 -m pip install -q --disable-pip-version-check --no-warn-script-location \
    --prefix "$intel" intel-opencl-rt intel-cmplr-lib-rt
fi
# The real path: in a git worktree whose .opencl links to another checkout's, the .icd file
# is that checkout's too, and must keep naming a library that exists there.
intel_lib="$(realpath "$(ls "$intel"/lib/libintelocl.so* | sort | head -n1)")"
echo "$intel_lib" > "$vendors/intel-cpu.icd"

echo "setup: OpenCL vendors in $vendors:" >&2
for f in "$vendors"/*.icd; do echo "  $(basename "$f"): $(cat "$f")" >&2; done
