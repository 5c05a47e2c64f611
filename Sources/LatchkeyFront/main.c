// `latchkey`: the front of the app. The app itself (`latchkey-app`: the window,
// every command, GTK and all) takes 8 ms and more just to be loaded; a script
// asking for a token while the agent runs should not pay that. So this small
// program answers `latchkey token --provider ID [--account NAME] [--format token|header]
// [--min-valid SECONDS] [--no-interaction]` itself when an agent answers on its socket, starts the
// agent (`latchkey-agent`) for `latchkey agent`, and hands everything else,
// unchanged, to the app (exec: same process, same arguments).
// Nothing is decided here that the app decides otherwise: the agent decides, and
// the app prints an agent's answer the same way (TokenCommand.run).
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent_answer.h"
#include "front.h"
#include "latchkey_token.h"  // exit statuses, refusal kinds and limits, the app's and the agent's too

// Where `name` (latchkey-app, latchkey-agent) is: beside this program, or in ../lib/latchkey
// installed. 0 with its path in `out`; -1 when there is no such program.
int program_path(const char *name, char *out, size_t capacity) {
    char self[PATH_MAX];
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return -1;
    self[length] = 0;
    char *slash = strrchr(self, '/');
    if (!slash) return -1;
    *slash = 0;
    const char *places[] = {"%s/%s", "%s/../lib/latchkey/%s"};
    for (size_t i = 0; i < sizeof places / sizeof *places; i++) {
        int written = snprintf(out, capacity, places[i], self, name);
        if (written > 0 && (size_t)written < capacity && access(out, X_OK) == 0) return 0;
    }
    return -1;
}

// Becomes `name` with argv as its arguments; returns only when there is no such program.
void run_program(const char *name, char **argv) {
    char program[PATH_MAX];
    if (program_path(name, program, sizeof program) == 0) execv(program, argv);
}

// The app: beside this program (a build), or in <prefix>/lib/latchkey (installed).
int run_app(char **argv) {
    run_program("latchkey-app", argv);
    fprintf(stderr, "latchkey: its app (latchkey-app) is not beside it, nor in ../lib/latchkey: install Latchkey again.\n");
    return FAILED;
}

// The value of `--name VALUE` or `--name=VALUE` at argv[*i]; NULL when argv[*i] is not that option.
const char *option(int argc, char **argv, int *i, const char *name) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0) return NULL;
    if (argv[*i][n] == '=') return argv[*i] + n + 1;
    if (argv[*i][n] == 0 && *i + 1 < argc) return argv[++*i];
    return NULL;
}

// One asking of the agent: the answer's length, -1 when nothing listens, 0 when it hung up having said
// nothing, AGENT_SILENT when the wait ran out. `sent` (when given) is called once the request is sent.
static long ask_agent_once(const char *request, char *answer, size_t capacity, void (*sent_hook)(void *), void *context) {
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    const char *forwarded = getenv("LATCHKEY_AGENT_SOCK");
    if (forwarded && forwarded[0] == '/') {
        if (snprintf(address.sun_path, sizeof address.sun_path, "%s", forwarded) >= (int)sizeof address.sun_path) return -1;
    } else {
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        if (!runtime || runtime[0] != '/') return -1;
        if (snprintf(address.sun_path, sizeof address.sun_path, "%s/latchkey/agent.sock", runtime) >= (int)sizeof address.sun_path)
            return -1;
    }
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        return -1;
    }
    // As long as the agent may take (a person answering its question, a provider renewing the token):
    // its connections last LATCHKEY_AGENT_CONNECTION_LIFETIME seconds at most.
    struct timeval wait = {.tv_sec = LATCHKEY_AGENT_CONNECTION_LIFETIME};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    // Connected: an agent runs. From here on nothing is "no agent" (the app would then sign in and hand
    // the token out itself). A busy agent says so before it closes; one that closed having said nothing,
    // whether before or after it took the request, hung up.
    size_t length = strlen(request), sent = 0;
    while (sent < length) {
        ssize_t n = send(fd, request + sent, length - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        sent += (size_t)n;
    }
    if (sent == length && sent_hook) sent_hook(context);
    size_t total = 0;
    int hung_up = 0;
    while (total < capacity) {
        ssize_t n = read(fd, answer + total, capacity - total);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            hung_up = n == 0 || errno == ECONNRESET;
            break;
        }
        total += (size_t)n;
    }
    close(fd);
    // Nothing said: hung up on (0; a request it could not take is one it hung up on too, as when ssh's
    // forward takes the connection and finds no agent behind it), or the wait ran out (AGENT_SILENT).
    return total == 0 && !hung_up && sent == length ? AGENT_SILENT : (long)total;
}

// The agent's answer to a plain JSON request, into answer; its length, -1 when no agent answers, 0
// when it hung up three times having said nothing, AGENT_SILENT when it did not answer in time.
// Asked where LATCHKEY_AGENT_SOCK says (the desktop's agent forwarded with ssh -R), else at this
// session's socket. One that hung up went away mid-request (ended or killed, perhaps started again):
// asked again, twice at most, after a pause for a killed agent's socket to be gone (until its process
// is torn down it still takes a connection, then resets it); with none listening then, -1.
long ask_agent(const char *request, char *answer, size_t capacity, void (*sent)(void *), void *context) {
    static const useconds_t pauses[] = {50000, 250000};
    long length = ask_agent_once(request, answer, capacity, sent, context);
    for (size_t i = 0; length == 0 && i < sizeof pauses / sizeof pauses[0]; i++) {
        usleep(pauses[i]);
        length = ask_agent_once(request, answer, capacity, sent, context);
    }
    return length;
}

int may_ask(int flag) {
    const char *ci = getenv("CI");
    if (flag) return 0;
    if (!ci || !*ci) return 1;
    const char *plain[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (strcasecmp(ci, plain[i]) == 0) return 1;
    return 0;
}

int agent_token(const char *answer, long length, char *token, size_t capacity, char *type, size_t type_capacity) {
    if (agent_answer_string(answer, (size_t)length, "error", token, capacity) >= 0) {
        char kind[32] = "";
        agent_answer_string(answer, (size_t)length, "kind", kind, sizeof kind);
        fprintf(stderr, "latchkey: %s\n", token);
        return strcmp(kind, LATCHKEY_REFUSAL_SIGNED_OUT) == 0 ? LatchkeyTokenExitSignedOut
               : strcmp(kind, LATCHKEY_REFUSAL_DENIED) == 0        ? LatchkeyTokenExitRefused
               : strcmp(kind, LATCHKEY_REFUSAL_NEEDS_PERSON) == 0  ? LatchkeyTokenExitNeedsPerson
                                                                    : FAILED;
    }
    if (agent_answer_string(answer, (size_t)length, "access_token", token, capacity) <= 0) {
        fprintf(stderr, "latchkey: Latchkey's agent did not answer: the connection to it closed before its answer.\n");
        return FAILED;
    }
    // Bearer as RFC 6750 writes it, whatever case the provider used; other schemes (DPoP) as given.
    if (agent_answer_string(answer, (size_t)length, "token_type", type, type_capacity) < 0 || strcasecmp(type, "bearer") == 0)
        snprintf(type, type_capacity, "Bearer");
    // As the app takes none other from a provider: whatever answers on the socket (a forwarded one
    // too) puts no second line, nor a space, into what is printed or handed to curl.
    if (!visible_ascii(token) || !visible_ascii(type)) {
        fprintf(stderr, "latchkey: Latchkey's agent answered a token with spaces, line breaks, control or non-ASCII characters, which no token has.\n");
        return FAILED;
    }
    return 0;
}

int visible_ascii(const char *text) {
    for (const unsigned char *c = (const unsigned char *)text; *c; c++)
        if (*c < 0x21 || *c > 0x7e) return 0;
    return 1;
}

int main(int argc, char **argv) {
    // `latchkey agent` and `latchkey agent run [options]`: the agent is a program of its own, and D-Bus
    // starts it this way. Its other subcommands, and options without `run`, are the app's.
    if (argc >= 2 && strcmp(argv[1], "agent") == 0 && (argc == 2 || strcmp(argv[2], "run") == 0)) {
        argv[argc == 2 ? 1 : 2] = "latchkey-agent";
        run_program("latchkey-agent", argv + (argc == 2 ? 1 : 2));
        fprintf(stderr, "latchkey: its agent (latchkey-agent) is not beside it, nor in ../lib/latchkey: install Latchkey again.\n");
        return FAILED;
    }
    if (argc >= 2 && strcmp(argv[1], "curl") == 0) return curl_command(argc, argv);
    if (argc < 2 || strcmp(argv[1], "token") != 0) return run_app(argv);
    const char *provider = NULL, *account = NULL, *format = "token", *minimum = "0";
    int no_interaction = 0;
    for (int i = 2; i < argc; i++) {
        const char *value;
        if (strcmp(argv[i], "--no-interaction") == 0) no_interaction = 1;
        else if ((value = option(argc, argv, &i, "--provider")) && !provider) provider = value;
        else if ((value = option(argc, argv, &i, "--account")) && !account) account = value;
        else if ((value = option(argc, argv, &i, "--format"))) format = value;
        else if ((value = option(argc, argv, &i, "--min-valid"))) minimum = value;
        else return run_app(argv);  // anything else is the app's to read, or to refuse
    }
    char *end;
    long seconds = strtol(minimum, &end, 10);
    if (!provider || !*minimum || *end || seconds < 0 || seconds > 86400 || (strcmp(format, "token") && strcmp(format, "header")))
        return run_app(argv);
    // A provider id never holds a slash (the app says so); an account is asked for as oidc-agent names one: provider/account.
    if (strchr(provider, '/') || (account && !*account)) return run_app(argv);
    char named[512], quoted[1024], request[1200];
    int written = account ? snprintf(named, sizeof named, "%s/%s", provider, account) : snprintf(named, sizeof named, "%s", provider);
    if (written < 0 || written >= (int)sizeof named) return run_app(argv);
    if (agent_answer_quote(named, quoted, sizeof quoted) < 0) return run_app(argv);
    snprintf(request, sizeof request,
             "{\"request\":\"access_token\",\"account\":%s,\"min_valid_period\":%ld,\"application_hint\":\"latchkey token\"%s}", quoted,
             seconds, may_ask(no_interaction) ? "" : ",\"interactive\":false");
    static char answer[LATCHKEY_AGENT_LARGEST_MESSAGE];
    long length = ask_agent(request, answer, sizeof answer, NULL, NULL);
    if (length == AGENT_SILENT) {
        fprintf(stderr, "latchkey: Latchkey's agent did not answer in time.\n");
        return FAILED;
    }
    if (length < 0) return run_app(argv);  // no agent: the app does the work itself
    static char text[LATCHKEY_AGENT_LARGEST_MESSAGE];
    char type[64];
    int ended = agent_token(answer, length, text, sizeof text, type, sizeof type);
    if (ended != 0) return ended;
    if (strcasecmp(type, "dpop") == 0) fputs(LATCHKEY_DPOP_NOTE, stderr);
    if (strcmp(format, "header") == 0) {
        printf("Authorization: %s %s\n", type, text);
    } else {
        printf("%s\n", text);
    }
    return fflush(stdout) == 0 ? 0 : FAILED;
}
