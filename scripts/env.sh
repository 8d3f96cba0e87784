# Source this: points the OpenCL ICD loader at the project-local vendors folder.
_clr_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export OCL_ICD_VENDORS="$_clr_root/.opencl/vendors"
# The Intel runtime's own libraries (TBB, compiler runtime) live beside libintelocl.so.
export LD_LIBRARY_PATH="$_clr_root/.opencl/intel/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset _clr_root
