#ifndef LATCHKEY_ARGUMENTS_H
#define LATCHKEY_ARGUMENTS_H

// The command line, as glibc handed it to this executable's constructors (see arguments.c);
// NULL, *count 0, under a C library that hands constructors nothing.
char **latchkey_kept_arguments(int *count);

// The command line read from /proc/self/cmdline: what the runtime is given when nothing was kept.
// Allocated once per call, never freed (the runtime keeps its argv for the whole run).
char **latchkey_read_arguments(int *count);

#endif
