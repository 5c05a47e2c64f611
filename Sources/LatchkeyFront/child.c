// The programs `latchkey curl` runs: curl (and, without an agent to ask, `latchkey token`), waited
// for, and curl started early — while the agent works on the request — so that its load, most of
// what `latchkey curl` costs, overlaps the agent's answer instead of following it.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "front.h"

// The wait status of the child `pid` once it ends (as waitpid gives it); -1 on failure.
static int waited(pid_t pid) {
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return status;
}

int exit_status(int wait_status) {
    if (wait_status < 0) return -1;
    return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

int child_status(pid_t pid) { return exit_status(waited(pid)); }

void say_no_curl(void) { fprintf(stderr, "latchkey: curl could not be started; install it (apt install curl).\n"); }

int run(const char *path, char **argv, int output) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        if (output >= 0 && dup2(output, STDOUT_FILENO) < 0) _exit(127);
        execvp(path, argv);
        _exit(127);
    }
    return child_status(pid);
}

void early_curl_start(void *context) {
    struct early_curl *early = context;
    if (early->pid > 0 || early->failed) return;  // asked again after a hang-up: it already waits
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) {
        early->failed = 1;
        return;
    }
    snprintf(early->configuration, sizeof early->configuration, "/dev/fd/%d", ends[0]);
    pid_t parent = getpid();
    // vfork: this process waits (a few hundred µs) until curl is exec'd, without copying its pages.
    // The child only makes system calls until then.
    pid_t pid = vfork();
    if (pid == 0) {
        // This process ending (killed, say) ends curl too: it never goes on without its header lines.
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent) _exit(127);
        // The read end is curl's (the write end closes at exec), and the files a bound token's first try is kept aside in.
        if (fcntl(ends[0], F_SETFD, 0) != 0 || (early->body >= 0 && fcntl(early->body, F_SETFD, 0) != 0) ||
            (early->dumped >= 0 && fcntl(early->dumped, F_SETFD, 0) != 0))
            _exit(127);
        execvp("curl", early->argv);
        _exit(127);
    }
    close(ends[0]);
    if (pid < 0) {
        close(ends[1]);
        early->failed = 1;
        return;
    }
    early->pid = pid;
    early->written = ends[1];
}

void early_curl_end(struct early_curl *early) {
    if (early->pid <= 0) return;
    // It has read nothing yet, so it has sent nothing: ended before it does.
    kill(early->pid, SIGKILL);
    close(early->written);
    child_status(early->pid);
    early->pid = 0;
}

int ending(int wait_status) {
    if (wait_status < 0) return FAILED;
    if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 127) {  // curl's own statuses end well below
        say_no_curl();
        return FAILED;
    }
    if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
    int signal_number = WTERMSIG(wait_status);
    const int core[] = {SIGQUIT, SIGILL, SIGABRT, SIGFPE, SIGSEGV, SIGBUS, SIGSYS, SIGTRAP, SIGXCPU, SIGXFSZ};
    for (size_t i = 0; i < sizeof core / sizeof *core; i++)
        if (core[i] == signal_number) return 128 + signal_number;
    signal(signal_number, SIG_DFL);
    raise(signal_number);
    return 128 + signal_number;
}

// `name = "value"` and a new line, as curl reads its configuration (a quoted value: \\ and \" escaped,
// \t \n \r \v for those); `name` alone for a value of NULL.
static void setting(FILE *out, const char *name, const char *value, size_t length) {
    if (!value) {
        fprintf(out, "%s\n", name);
        return;
    }
    fprintf(out, "%s = \"", name);
    for (size_t i = 0; i < length; i++) {
        const char *escaped = value[i] == '"' ? "\\\"" : value[i] == '\\' ? "\\\\" : value[i] == '\t' ? "\\t"
                              : value[i] == '\n' ? "\\n" : value[i] == '\r' ? "\\r" : value[i] == '\v' ? "\\v" : NULL;
        if (escaped) fputs(escaped, out);
        else fputc(value[i], out);
    }
    fputs("\"\n", out);
}

int early_curl_run(struct early_curl *early, const char *headers, int keep_aside, int own_output) {
    void (*previous)(int) = signal(SIGPIPE, SIG_IGN);  // a curl that ended early is a write error here, not this process's end
    FILE *out = fdopen(early->written, "w");
    if (out) {
        for (const char *line = headers; *line;) {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line) : strlen(line);
            // Each line is a header curl sends as it is (`@…` would be a file of them it reads).
            if (length && line[0] != '@') setting(out, "header", line, length);
            line += length + (end ? 1 : 0);
        }
        if (keep_aside) {
            char path[32];
            snprintf(path, sizeof path, "/dev/fd/%d", early->dumped);
            setting(out, "dump-header", path, strlen(path));
            if (!own_output) {
                snprintf(path, sizeof path, "/dev/fd/%d", early->body);
                setting(out, "output", path, strlen(path));
                setting(out, "output-dir", "", 0);  // not one a .curlrc names: the file above is where it goes
                // No progress meter where curl, writing to a terminal, would show none.
                if (isatty(STDOUT_FILENO)) setting(out, "no-progress-meter", NULL, 0);
            }
        }
        // The URL last, in one write of less than PIPE_BUF (which a pipe takes whole or not at all): a
        // configuration cut short (this process killed while writing it) has none, nor a part of one,
        // and curl then sends nothing.
        fflush(out);
        static char line[PIPE_BUF];
        FILE *url = fmemopen(line, sizeof line, "w");
        if (url) {
            setting(url, "url", early->url, strlen(early->url));
            long length = ftell(url);
            int whole = !ferror(url) && length > 0 && length < (long)sizeof line;
            fclose(url);
            if (whole) (void)!write(early->written, line, (size_t)length);
        }
        fclose(out);
    } else {
        close(early->written);
    }
    signal(SIGPIPE, previous);
    int status = waited(early->pid);
    early->pid = 0;
    return status;
}
