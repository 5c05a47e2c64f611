// The command line for the Swift runtime, kept as glibc hands it over, instead of found again.
//
// On Linux, the Swift runtime finds argv for `CommandLine.arguments` from a constructor of its own
// (stdlib/public/CommandLineSupport/CommandLine.cpp): it reads /proc/self/maps line by line with
// sscanf to find the stack, then walks back from `environ`. With GTK's libraries loaded that is ~400
// lines, each printed by the kernel and parsed again: ~0.5 ms of every launch before `main`, most
// of what the runtime's start costs (docs/performance.md).
//
// glibc calls each constructor of an executable with (argc, argv, envp). This file keeps them, and
// defines the one function through which the standard library asks for argv. Linked into the
// program as an object, the definition is there before the linker looks in libswiftCore.a, so the
// archive's CommandLine member (the scan and the two functions beside it) is never taken in. Should
// a later toolchain call argv's function by another name, that member comes back and all is as it
// was; should it reach for the member's other function, the link fails on the duplicate: neither
// can go unnoticed. Under a C library that hands constructors nothing, /proc/self/cmdline is read.
#include "arguments.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **kept_argv;
static int kept_argc;

__attribute__((constructor(101))) static void keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 0 && argv != NULL && argv[argc] == NULL) {
        kept_argc = argc;
        kept_argv = argv;
    }
}

char **latchkey_kept_arguments(int *count) {
    *count = kept_argc;
    return kept_argv;
}

// /proc/self/cmdline holds the arguments, each ended by a NUL.
char **latchkey_read_arguments(int *count) {
    static char *empty[] = {NULL};
    FILE *file = fopen("/proc/self/cmdline", "re");
    if (file == NULL) {
        *count = 0;
        return empty;
    }
    char *text = NULL;
    size_t length = 0, capacity = 0;
    for (;;) {
        if (length == capacity) {
            capacity = capacity ? capacity * 2 : 4096;
            char *grown = realloc(text, capacity);
            if (grown == NULL) break;
            text = grown;
        }
        size_t got = fread(text + length, 1, capacity - length, file);
        if (got == 0) break;
        length += got;
    }
    fclose(file);
    int argc = 0;
    for (size_t i = 0; i < length; i++) argc += text[i] == '\0';
    char **argv = calloc((size_t)argc + 1, sizeof *argv);
    if (argv == NULL) {
        *count = 0;
        return empty;
    }
    size_t start = 0;
    for (int i = 0; i < argc; i++) {
        argv[i] = text + start;
        start += strlen(text + start) + 1;
    }
    *count = argc;
    return argv;
}

// What the standard library's CommandLine calls, once, for argc and argv (its own declaration:
// @_silgen_name("_swift_stdlib_getUnsafeArgvArgc"), the Swift calling convention).
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    if (kept_argv != NULL) {
        *outArgLen = kept_argc;
        return kept_argv;
    }
    static char **read_argv;
    static int read_argc;
    if (read_argv == NULL) read_argv = latchkey_read_arguments(&read_argc);
    *outArgLen = read_argc;
    return read_argv;
}
