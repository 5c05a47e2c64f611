#!/usr/bin/python3
"""scripts/libc-first.py EXECUTABLE…: makes the C library the first library each executable names.

The dynamic loader looks every symbol of every library up in the program's libraries in the order the
program names them (its DT_NEEDED entries, then theirs, breadth first), and most symbols are the C
library's (malloc, memcpy, strlen…). SwiftPM puts what the C modules link first and the C library
last, 17th for the app: each lookup a launch makes (GTK's own libraries' symbols) first checked 12
libraries more than the C window's, where the C library comes 4th (Debian's cc links --as-needed).
Counted with callgrind, launch to the window's map: 293.9 million instructions with the C library
17th, 292.2-292.7 million with it first, the C window's 285.0-285.5 million; on a display's first
GTK launch, which also loads Mesa and its symbols, 2.8 million fewer (docs/performance.md).
SwiftPM gives no way to put a library before the C modules' own, so the order is changed here,
after the link: the entries are swapped in place, nothing else moves, and the file's times are
kept, so that the next build does not link it again.

Which definition a symbol gets can change only where two libraries define the same name: of the
libraries the app names, the C library shares names with libm (frexp, ldexp, … the same functions,
kept in both) and the loader (its private _dl_* entry points); the C window resolves those in the C
library too. A run on a file whose C library comes first already changes nothing.
"""

import errno
import os
import shutil
import struct
import subprocess
import sys

PT_LOAD, PT_DYNAMIC = 1, 2
DT_NULL, DT_NEEDED, DT_STRTAB = 0, 1, 5
FIRST = "libc.so.6"


def file_offset(segments, address):
    """Where in the file the loaded address comes from (its PT_LOAD segment)."""
    for offset, vaddr, filesz in segments:
        if vaddr <= address < vaddr + filesz:
            return offset + address - vaddr
    raise ValueError(f"address {address:#x} is in no loaded segment")


def reorder(path):
    """The order that puts the C library first among path's DT_NEEDED entries, without writing it:
    (the names in their new order, the writes that make it: (file offset, bytes) each)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path} is not a 64-bit little-endian ELF file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments, dynamic = [], None
    for index in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", data, phoff + index * phentsize)
        if p_type == PT_LOAD:
            segments.append((p_offset, p_vaddr, p_filesz))
        elif p_type == PT_DYNAMIC:
            dynamic = p_offset
    if dynamic is None:
        raise ValueError(f"{path} has no dynamic section")
    slots, strtab, at = [], None, dynamic
    while True:
        tag, value = struct.unpack_from("<qQ", data, at)
        if tag == DT_NULL:
            break
        if tag == DT_NEEDED:
            slots.append((at, value))
        elif tag == DT_STRTAB:
            strtab = value
        at += 16
    strings = file_offset(segments, strtab)

    def name(value):
        start = strings + value
        return data[start:data.index(b"\0", start)].decode()

    values = [value for _, value in slots]
    if FIRST not in map(name, values):
        raise ValueError(f"{path} does not name {FIRST}")
    ordered = sorted(values, key=lambda value: name(value) != FIRST)  # stable: the rest keep their order
    writes = [(at + 8, struct.pack("<Q", new)) for (at, old), new in zip(slots, ordered) if new != old]
    return [name(value) for value in ordered], writes


def write(path, writes):
    """Writes in place, so that the file keeps its inode and times (SwiftPM's build then does not link
    it again). A program running from the file cannot be written (ETXTBSY: the agent, say): then a
    changed copy takes its place, as a new link would."""
    def apply(target):
        with open(target, "r+b") as f:
            for offset, data in writes:
                f.seek(offset)
                f.write(data)

    times = os.stat(path)
    try:
        apply(path)
    except OSError as error:
        if error.errno != errno.ETXTBSY:
            raise
        copy = f"{path}.libc-first"
        shutil.copy2(path, copy)
        apply(copy)
        os.replace(copy, path)
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def needed(path):
    """path's DT_NEEDED names, in order, as the loader reads them (readelf's reading, not ours)."""
    output = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in output.splitlines() if "(NEEDED)" in line]


def main(paths):
    for path in paths:
        try:
            names, writes = reorder(path)
        except ValueError as error:
            sys.exit(f"libc-first.py: {error}")
        if writes:
            write(path, writes)
        # Checked by another reader than ours: exactly the order meant, every library still named.
        after = needed(path)
        if after != names:
            sys.exit(f"libc-first.py: {path} names {' '.join(after)}, not {' '.join(names)}")
        print(f"libc-first.py: {os.path.basename(path)}: {' '.join(after)}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1:])
