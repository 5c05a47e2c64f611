// What the front's two commands share (main.c: `latchkey token`; curl.c: `latchkey curl`).
#ifndef LATCHKEY_FRONT_H
#define LATCHKEY_FRONT_H
#include <stddef.h>

#include "latchkey_token.h"

enum { FAILED = LatchkeyTokenExitFailed };
// ask_agent's answer when an agent runs but took nothing of the request, and said nothing.
enum { AGENT_BUSY = -2 };

int program_path(const char *name, char *out, size_t capacity);
void run_program(const char *name, char **argv);
int run_app(char **argv);
const char *option(int argc, char **argv, int *i, const char *name);
long ask_agent(const char *request, char *answer, size_t capacity);
int curl_command(int argc, char **argv);

#endif
