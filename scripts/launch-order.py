#!/usr/bin/env python3
"""The functions of one executable that callgrind saw run, from one or more
callgrind output files: one mangled name a line, sorted, so that a new list
differs from the last by what changed. (The linker keeps them together; their
order among themselves makes no difference a launch can measure.)

    scripts/launch-order.py EXECUTABLE_NAME callgrind.out...
"""
import re
import sys

SPEC = re.compile(r"^(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")


def functions(path, executable):
    """Callgrind names each object and function once, as `fn=(id) name`, then by id alone."""
    objects, names, current, found = {}, {}, None, []
    with open(path, errors="replace") as f:
        for line in f:
            match = SPEC.match(line.rstrip("\n"))
            if not match:
                continue
            kind, key, name = match.groups()
            table = objects if kind.endswith("ob") else names
            if name:
                table[key] = name
            if kind == "ob":
                current = objects[key]
            elif kind == "fn" and current and current.rsplit("/", 1)[-1] == executable:
                found.append(names[key])
    return found


def main():
    executable, paths = sys.argv[1], sys.argv[2:]
    names = set()
    for path in paths:
        names.update(functions(path, executable))
    # The C start-up (the entry point, and crtbegin's constructor that runs before main) is not named in
    # callgrind's output: kept with the rest, or the 64 KiB around each come in for it alone.
    names.update(("_start", "frame_dummy"))
    for name in sorted(names):
        print(name)


if __name__ == "__main__":
    main()
