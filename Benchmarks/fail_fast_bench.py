"""make bench's fail-fast section (issue 40 §3): how long each command that would need a person
takes to end where nobody may be asked, against the same command answered with a token.

The agent runs with the bench's display, as on a desktop, so a question would show and wait for
an answer (two minutes); the measured program (this interpreter) is not allowed. Each round runs
each command once, in turn; medians and the slowest of the rounds.
"""

import os
import subprocess
import sys
import time

import agent_bench

ROUNDS = int(os.environ.get("BENCH_FAIL_FAST_ROUNDS", "20"))
NEEDS_PERSON = 6


def run_s(argv, env, stdin=None, expected=NEEDS_PERSON):
    """One whole process, with no terminal on any of its descriptors (seconds); its exit status checked."""
    started = time.perf_counter()
    result = subprocess.run(argv, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            timeout=300)
    elapsed = time.perf_counter() - started
    if result.returncode != expected:
        raise RuntimeError(f"{argv} ended with {result.returncode}, not {expected}: {result.stderr!r}")
    return elapsed


def fail_fast_rows(bin_dir, sandbox_process_factory):
    """Seconds to the sentence: latchkey token --no-interaction (the front, through the agent), the same
    with CI=true, the git helper with credential.interactive=false, and a resource's first sign-in with
    neither a display nor a terminal (no agent); the baseline is latchkey token for an allowed program."""
    process, base = sandbox_process_factory([])
    resource_process, resource_base = sandbox_process_factory([])
    try:
        home, env = agent_bench.signed_in_home("fail-fast", base)
        git_host = base.split("//")[1]
        provider = os.path.join(home.config, "latchkey", "mine.json")
        with open(provider) as f:
            text = f.read()
        with open(provider, "w") as f:
            f.write(text.rstrip().rstrip("}") + f', "git_hosts": ["{git_host}"]}}')
        latchkey = os.path.join(bin_dir, "latchkey")
        bare = {k: v for k, v in env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
        git_input = f"protocol=http\nhost={git_host}\n\n"
        commands = {
            "token": ([latchkey, "token", "--provider", "mine", "--no-interaction"], env, None),
            "ci": ([latchkey, "token", "--provider", "mine"], dict(env, CI="true"), None),
            "git": ([latchkey, "git-credential", "get"], dict(env, GIT_CONFIG_PARAMETERS="'credential.interactive=false'"),
                    git_input),
        }
        samples = {key: [] for key in (*commands, "resource", "allowed")}
        # A resource's first sign-in, with no agent (one on the desktop would ask there: someone may be
        # asked); the first round registers Latchkey at its server.
        for _ in range(ROUNDS):
            samples["resource"].append(run_s([latchkey, "token", "--resource", resource_base + "/api/me"], bare))
        log = open(os.path.join(home.root, "agent.log"), "ab")
        # As on a desktop: the agent has a display to ask on (start_agent's agent has none).
        agent = subprocess.Popen([latchkey, "agent", "--log-level", "notice"], env=env, stdout=log, stderr=log)
        try:
            sock = os.path.join(env["XDG_RUNTIME_DIR"], "latchkey", "agent.sock")
            deadline = time.monotonic() + 20
            while not os.path.exists(sock) and time.monotonic() < deadline:
                time.sleep(0.02)
            for _ in range(ROUNDS):
                for key, (argv, environment, stdin) in commands.items():
                    # The git helper answers nothing (git then fails): its status is 0, its sentence on stderr.
                    samples[key].append(run_s(argv, environment, stdin, expected=0 if key == "git" else NEEDS_PERSON))
            subprocess.run([latchkey, "agent", "allow", "--including-what-it-runs", os.path.realpath(sys.executable), "mine"],
                           env=env, check=True, stdout=subprocess.DEVNULL)
            for _ in range(ROUNDS):
                samples["allowed"].append(run_s(commands["token"][0], env, expected=0))
        finally:
            agent.terminate()
            agent.wait(10)
            log.close()
        return samples
    finally:
        for each in (process, resource_process):
            each.terminate()
            each.wait(10)
