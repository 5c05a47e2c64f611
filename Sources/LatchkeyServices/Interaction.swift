import FoundationEssentials
import Glibc
import OAuthCore

/// Whether a command may wait for a person: to answer the agent's question, to sign in in a window
/// or a browser, to type a code on another device. Where nobody may be asked, a command that would
/// need someone ends at once with a sentence and `LatchkeyTokenExitNeedsPerson` (issue 40 §3)
/// instead of waiting for a window, a browser or a code that nobody will see.
public struct Interaction: Sendable, Equatable {
    /// Why nobody may be asked, as the end of a sentence ("… and <why>"); nil: someone may be.
    public let nobodyBecause: String?

    public var mayAsk: Bool { nobodyBecause == nil }

    public init(nobodyBecause: String?) {
        self.nobodyBecause = nobodyBecause
    }

    /// `--no-interaction`, else `CI` (set by the CI services: GitHub Actions, GitLab CI and others, to
    /// `true` or `1`), else `gitSaysNo` (git's `credential.interactive=false`, for its helper).
    public static func decide(noInteraction: Bool, environment: [String: String], gitSaysNo: Bool = false) -> Interaction {
        if noInteraction { return Interaction(nobodyBecause: "--no-interaction says nobody may be asked") }
        if isSet(environment["CI"]) { return Interaction(nobodyBecause: "CI is set (a CI job), so nobody may be asked") }
        if gitSaysNo { return Interaction(nobodyBecause: "git's credential.interactive is false, so nobody may be asked") }
        return Interaction(nobodyBecause: nil)
    }

    /// A value a CI service sets: anything but empty, `false`, `0`, `no` or `off`.
    static func isSet(_ value: String?) -> Bool {
        guard let value = value?.lowercased(), !value.isEmpty else { return false }
        return !["false", "0", "no", "off"].contains(value)
    }

    /// A person at hand where this command runs: a graphical session (`DISPLAY`, `WAYLAND_DISPLAY`)
    /// or a terminal on standard error, where a code or an address would be read. Without either, the
    /// command's own sign-in (a window, a code, an address to paste back) has nobody to reach unless
    /// asked for (`--device`, `--paste`).
    public static func personAtHand(environment: [String: String]) -> (display: Bool, terminal: Bool) {
        (namesDisplay(.given(environment)), isatty(STDERR_FILENO) == 1)
    }

    /// Whether the environment names a graphical session: `DISPLAY` or `WAYLAND_DISPLAY`, not empty.
    public static func namesDisplay(_ environment: EnvironmentVariables) -> Bool {
        environment.nonEmpty("DISPLAY") != nil || environment.nonEmpty("WAYLAND_DISPLAY") != nil
    }

    /// git's `credential.interactive`, as its credential helpers are asked to honour it (git 2.46's
    /// git-config(1)): false (or `never`, Git Credential Manager's word) when it says nobody may be
    /// asked. Read with `git config`, so that every level (system, global, the repository's, `-c`) counts.
    public static func gitCredentialInteractiveIsFalse(environment: [String: String]) -> Bool {
        guard let value = gitConfig("credential.interactive", environment: environment)?.lowercased() else { return false }
        return ["false", "no", "off", "0", "never"].contains(value)
    }

    /// `git config --type=bool-or-str --get NAME` (git spells a boolean `true` or `false` then, an
    /// empty value included), or nil: no git, no such setting, or no answer within two seconds (it
    /// is then killed). The git that ran the helper where git says (`GIT_EXEC_PATH`), else PATH's.
    private static func gitConfig(_ name: String, environment: [String: String]) -> String? {
        var pipe: [Int32] = [-1, -1]
        guard pipeClosedOnExec(&pipe, O_CLOEXEC) == 0 else { return nil }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipe[1], STDOUT_FILENO)
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        _ = spawnActionsCloseFrom(&actions, 3)
        let exec = environment["GIT_EXEC_PATH"].map { $0 + "/git" }
        let git: String = exec.flatMap { access($0, X_OK) == 0 ? $0 : nil } ?? "git"
        let arguments = [git, "config", "--type=bool-or-str", "--get", name]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for text in argv + envp { free(text) } }
        var pid: pid_t = 0
        let spawned = withCleanSpawnAttributes { posix_spawnp(&pid, git, &actions, $0, &argv, &envp) }
        close(pipe[1])
        guard spawned == 0 else {
            close(pipe[0])
            return nil
        }
        let output = readAtMost(4096, from: pipe[0], within: 2000)
        // Closed before the wait: a git with more to say gets EPIPE instead of blocking on a full pipe.
        close(pipe[0])
        if output == nil { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        let text = String(decoding: output ?? [], as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        return text.isEmpty ? nil : text
    }

    /// Up to `most` bytes from `fd`, until its end; nil when it did not end within `milliseconds`.
    private static func readAtMost(_ most: Int, from fd: Int32, within milliseconds: Int32) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let end = Int(deadline.tv_sec) * 1000 + Int(deadline.tv_nsec) / 1_000_000 + Int(milliseconds)
        while output.count < most {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = end - (Int(now.tv_sec) * 1000 + Int(now.tv_nsec) / 1_000_000)
            guard left > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(left))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return nil }
            let n = read(fd, &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return output }
            output += buffer[0..<n]
        }
        return output
    }
}
