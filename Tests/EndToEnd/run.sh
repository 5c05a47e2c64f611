#!/usr/bin/env bash
# The end-to-end scenarios under a private Xvfb display; each scenario makes its own D-Bus session.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p test-output/e2e
exec scripts/with-xvfb.sh /usr/bin/python3 Tests/EndToEnd/e2e.py "$@"
