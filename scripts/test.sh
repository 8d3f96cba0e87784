#!/usr/bin/env bash
# The test suite, on every OpenCL device found (PoCL, Intel CPU runtime, Oclgrind here).
# Installs the devices first when they are missing (scripts/setup.sh is idempotent).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo test --release "$@"
