#!/usr/bin/env bash
# The main job: installs the OpenCL devices if missing, then runs the demo on the default device
# (devices found, the plan chosen, results checked against the host).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
source scripts/env.sh
cargo run --release --quiet -- demo "$@"
