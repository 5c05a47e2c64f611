#!/usr/bin/env bash
# The end-to-end scenarios, side by side (E2E_JOBS at a time, one per core by default), each worker
# on a private Xvfb display of its own and each scenario in a D-Bus session of its own.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test-output/e2e
exec /usr/bin/python3 Tests/EndToEnd/e2e.py "$@"
