#!/usr/bin/python3
"""End-to-end scenarios for the real latchkey binary under Xvfb.

Run all:        Tests/EndToEnd/run.sh
One scenario:   Tests/EndToEnd/run.sh happy_path

Each scenario runs in its own D-Bus session (with the accessibility bus) and
its own home directory; the default browser is a recording handler registered
the way the desktop registers any browser. Screenshots of every state land in
test-output/e2e/<scenario>/.

The scenarios live by theme in basics.py, presets.py, command_line.py,
hostile.py, keyrings.py, desktop.py, zero_config.py, oauth1.py, trust.py, agent.py, accounts.py and no_browser.py; harness.py holds what they share, driver.py
drives the app through the accessibility bus.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accounts  # noqa: E402
import activation  # noqa: E402
import agent  # noqa: E402
import basics  # noqa: E402
import command_line  # noqa: E402
import desktop  # noqa: E402
import dpop  # noqa: E402
import enterprise  # noqa: E402
import harness  # noqa: E402
import hostile  # noqa: E402
import keyrings  # noqa: E402
import least_privilege  # noqa: E402
import no_browser  # noqa: E402
import no_surprises  # noqa: E402
import over_ssh  # noqa: E402
import package  # noqa: E402
import oauth1  # noqa: E402
import presets  # noqa: E402
import trust  # noqa: E402
import zero_config  # noqa: E402

SCENARIOS = {}
for module in (basics, presets, command_line, hostile, keyrings, desktop, zero_config, oauth1, trust, agent, least_privilege, dpop,
               accounts, no_browser, no_surprises, activation, over_ssh, enterprise, package):
    SCENARIOS.update(module.SCENARIOS)

if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--inside":
        sys.exit(harness.run_one(SCENARIOS, sys.argv[2]))
    sys.exit(harness.run_all(os.path.abspath(__file__), sys.argv[1:] or list(SCENARIOS)))
