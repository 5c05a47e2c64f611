#!/usr/bin/env python3
"""What the compiler does not check: no Swift file over 400 lines, no function
over 60 (40 in the app's controller), except widget layout, whose declaration
says so with a `// Layout:` comment on the line before; and `///` only on
declarations (a comment inside code is `//`); the window, its dialogs and the
agent's service name no command type; and in Sources, a thread blocks on a
DispatchSemaphore only inside the one sync-to-async bridge. Exits 1 on a breach."""
import pathlib
import re
import sys

FILE_LIMIT = 400
FUNCTION_LIMIT = 60
TIGHTER = {"Sources/Latchkey/Window/AppController.swift": 40, "Sources/Latchkey/Window/AppController+Choosing.swift": 40}
# The window and its dialogs never reach into a command's type: a decision they share with one lives
# in LatchkeyCore or AgentCore, where it is tested without a display. (The agent, a module of its own,
# cannot name the app's commands at all.)
ROOMS_WITHOUT_COMMANDS = ("Sources/Latchkey/Window/", "Sources/Latchkey/Dialogs/")
COMMAND_TYPE = re.compile(r"\b(?!Parsable)[A-Z][A-Za-z]*Command\b")
# One vocabulary for a thread that waits: SyncBridge and ThreadSignal, both in one file.
BRIDGE = "Sources/OAuthCore/Transport/SyncBridge.swift"
SEMAPHORE = re.compile(r"\bDispatchSemaphore\b")
DECLARATION = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|static|class|"
                         r"final|override|nonisolated|mutating|convenience|required|@MainActor)\s+)*(?:func\s+\w+|init[?!]?)\s*[(<]")


def code_only(line, in_string):
    """The line without comments and string contents, and whether a multi-line string is still open."""
    out, i = [], 0
    while i < len(line):
        if in_string:
            end = line.find('"""', i)
            if end < 0:
                return "".join(out), True
            i, in_string = end + 3, False
            continue
        if line.startswith('"""', i):
            i, in_string = i + 3, True
            continue
        if line.startswith("//", i):
            break
        if line[i] == '"':
            j = i + 1
            while j < len(line) and line[j] != '"':
                j += 2 if line[j] == "\\" else 1
            i = j + 1
            continue
        out.append(line[i])
        i += 1
    return "".join(out), in_string


MODIFIER = re.compile(r"^(@\w+(\([^)]*\))?|public|private|fileprivate|internal|package|open|static|final|override|"
                      r"nonisolated|mutating|convenience|required|lazy|weak|unowned|indirect|dynamic|optional)(\([^)]*\))?\s*")
DECLARED = re.compile(r"^(func|init|deinit|var|let|case|struct|class|enum|protocol|extension|actor|typealias|subscript|"
                      r"associatedtype|macro|precedencegroup|operator)\b")


def is_declaration(line):
    rest = line.strip()
    while True:
        match = MODIFIER.match(rest)
        if not match or not match.group(0):
            break
        rest = rest[match.end():]
    return bool(DECLARED.match(rest)) or rest.startswith("#if") or rest == ""


def misplaced_documentation(path, lines):
    """`///` that documents no declaration: what follows the comment is not one."""
    found, index = [], 0
    while index < len(lines):
        if not lines[index].strip().startswith("///"):
            index += 1
            continue
        end = index
        while end < len(lines) and lines[end].strip().startswith("///"):
            end += 1
        following = lines[end] if end < len(lines) else ""
        if not is_declaration(following) and not following.strip().startswith("@"):
            found.append(f"{path}:{index + 1}: /// before something that is not a declaration: {following.strip()[:60]}")
        index = end
    return found


def breaches(path, text):
    lines = text.split("\n")
    found = misplaced_documentation(path, lines)
    if len(lines) - 1 > FILE_LIMIT:
        found.append(f"{path}: {len(lines) - 1} lines (at most {FILE_LIMIT})")
    limit = TIGHTER.get(str(path), FUNCTION_LIMIT)
    in_string = False
    cleaned = []
    for line in lines:
        code, in_string = code_only(line, in_string)
        cleaned.append(code)
    if any(str(path).startswith(room) for room in ROOMS_WITHOUT_COMMANDS):
        for number, code in enumerate(cleaned):
            for name in COMMAND_TYPE.findall(code):
                found.append(f"{path}:{number + 1}: names the command type {name}: what a command and this room "
                             "share belongs in LatchkeyCore (or AgentCore)")
    if str(path).startswith("Sources/") and str(path) != BRIDGE:
        for number, code in enumerate(cleaned):
            if SEMAPHORE.search(code):
                found.append(f"{path}:{number + 1}: a DispatchSemaphore outside {BRIDGE}: wait through SyncBridge, "
                             "or ThreadSignal")
    for number, line in enumerate(lines):
        if not DECLARATION.match(cleaned[number]) or "protocol" in cleaned[number]:
            continue
        if number > 0 and "// Layout:" in lines[number - 1]:
            continue
        depth, opened, end = 0, False, None
        for index in range(number, len(lines)):
            for char in cleaned[index]:
                if char == "{":
                    depth, opened = depth + 1, True
                elif char == "}":
                    depth -= 1
            if opened and depth == 0:
                end = index
                break
            if not opened and index > number + 6:
                break  # a requirement without a body
        if end is not None and end - number + 1 > limit:
            name = line.strip().split("(")[0]
            found.append(f"{path}:{number + 1}: {name} is {end - number + 1} lines (at most {limit})")
    return found


def main():
    roots = sys.argv[1:] or ["Sources", "Tests"]
    found = []
    for root in roots:
        for path in sorted(pathlib.Path(root).rglob("*.swift")):
            found += breaches(path, path.read_text())
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
