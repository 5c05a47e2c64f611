// What the front's two commands share (main.c: `latchkey token`; curl.c: `latchkey curl`).
#ifndef LATCHKEY_FRONT_H
#define LATCHKEY_FRONT_H
#include <stddef.h>

#include "latchkey_token.h"

enum { FAILED = LatchkeyTokenExitFailed };
// ask_agent's answer when the agent said nothing before the wait ran out (not a hang-up: never asked again).
enum { AGENT_SILENT = -3 };

int program_path(const char *name, char *out, size_t capacity);
void run_program(const char *name, char **argv);
int run_app(char **argv);
const char *option(int argc, char **argv, int *i, const char *name);
long ask_agent(const char *request, char *answer, size_t capacity);
/// The agent's answer (`length` bytes) read: a refusal said on stderr, its exit status returned; else 0,
/// the token in `token` and its scheme in `type` ("Bearer", or as the agent names it: "DPoP").
int agent_token(const char *answer, long length, char *token, size_t capacity, char *type, size_t type_capacity);
int curl_command(int argc, char **argv);
/// Whether the agent may ask the person (Interaction.decide in the app): not with --no-interaction
/// (`flag`), nor when CI is set to anything but empty, false, 0, no or off.
int may_ask(int flag);

#endif
