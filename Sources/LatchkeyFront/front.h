// What the front's two commands share (main.c: `latchkey token`; curl.c: `latchkey curl`).
#ifndef LATCHKEY_FRONT_H
#define LATCHKEY_FRONT_H
#include <stddef.h>
#include <sys/types.h>

#include "latchkey_token.h"

enum { FAILED = LatchkeyTokenExitFailed };
// ask_agent's answer when the agent said nothing before the wait ran out (not a hang-up: never asked again).
enum { AGENT_SILENT = -3 };

int program_path(const char *name, char *out, size_t capacity);
void run_program(const char *name, char **argv);
int run_app(char **argv);
const char *option(int argc, char **argv, int *i, const char *name);
/// The agent's answer to `request` (main.c says how it is asked); `sent`, when given, is called with
/// `context` each time the request has been sent, while the agent works on it.
long ask_agent(const char *request, char *answer, size_t capacity, void (*sent)(void *), void *context);
/// The agent's answer (`length` bytes) read: a refusal said on stderr, its exit status returned; else 0,
/// the token in `token` and its scheme in `type` ("Bearer", or as the agent names it: "DPoP").
/// A token or a scheme from anything but the agent's own answer is refused (the sentence said) unless visible_ascii.
int agent_token(const char *answer, long length, char *token, size_t capacity, char *type, size_t type_capacity);
/// Whether `text` is all visible ASCII (0x21–0x7e): no space, line break, control or other character.
int visible_ascii(const char *text);
int curl_command(int argc, char **argv);
/// Whether the agent may ask the person (Interaction.decide in the app): not with --no-interaction
/// (`flag`), nor when CI is set to anything but empty, false, 0, no or off.
int may_ask(int flag);

// child.c: the programs `latchkey curl` runs.
/// Runs `path` with `argv`, its standard output into `output` (-1: this process's); its exit status
/// (128 + the signal for one killed), or -1 when it could not be started.
int run(const char *path, char **argv, int output);
/// The exit status of the child `pid`, once it ends (128 + the signal for one killed); -1 on failure.
int child_status(pid_t pid);
/// A wait status as an exit status (128 + the signal for one killed); -1 for -1.
int exit_status(int wait_status);
/// Says on stderr that curl could not be started, and how to get it.
void say_no_curl(void);
/// curl started before its header lines are known: it reads its URL and them from a pipe (`-K
/// /dev/fd/N`, the path in `configuration`) before anything else, and waits there. Its URL comes there
/// too: should this process end before they are written, curl has no URL and sends nothing.
struct early_curl {
    char **argv;      // curl's (without the URL), one of them `configuration`
    const char *url;  // the request's
    char configuration[32];
    pid_t pid;   // 0 until started
    int written; // the pipe's end the configuration is written to
    int failed;  // it could not be started: curl is run afterwards, as without it
    // Memfds it holds from its start (-1: none), where a bound token's first try is kept aside: the
    // answer (unless the request names its own output) and its header lines.
    int body, dumped;
};
/// Starts `context` (a struct early_curl) once; ask_agent's `sent`.
void early_curl_start(void *context);
/// Ends a started early curl that is not to be used.
void early_curl_end(struct early_curl *early);
/// Gives the early curl its URL and `headers` (and, `keep_aside`, has it write the answer's header
/// lines to `dumped`, and the answer to `body` unless `own_output`), then waits for it: its wait
/// status, or -1.
int early_curl_run(struct early_curl *early, const char *headers, int keep_aside, int own_output);
/// What this process ends with for curl's wait status (-1: it could not be waited for): its exit
/// status, or its signal, raised on this process (128 + the signal for one that would leave a core).
int ending(int wait_status);

#endif
