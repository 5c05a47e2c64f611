import AgentCore
import Dispatch
import FoundationEssentials
import Glibc
import InstallLayout
import LatchkeyServices
import Logging
import OAuthCore
import Synchronization

/// `latchkey-app agent ask|sign-in …` (`AgentHelper`), started by the agent for one question or
/// one sign-in: its standard input and output pipes only the agent holds, its standard error the
/// agent's (its log), nothing else of the agent's. Its input is closed once, under the mutex.
final class AppChild: Sendable {
    private let pid: pid_t
    /// -1 once closed.
    private let input: Mutex<Int32>
    private let output: Int32
    /// Whether the child has been waited for: its process id may be another process's from then
    /// on, and no signal is sent to it.
    private let reaped = Mutex(false)

    /// The app beside the agent: in a build (`.build/<configuration>`) and installed (`<prefix>/lib/latchkey`) alike.
    static var app: String { InstallLayout.current.beside("latchkey-app").path }

    init(_ arguments: [String]) throws {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipeClosedOnExec(&toChild, O_CLOEXEC) == 0 else { throw OAuthError.userAgent("no pipe for Latchkey's dialog.") }
        guard pipeClosedOnExec(&fromChild, O_CLOEXEC) == 0 else {
            for fd in toChild { close(fd) }
            throw OAuthError.userAgent("no pipe for Latchkey's dialog.")
        }
        defer {
            close(toChild[0])
            close(fromChild[1])
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        _ = spawnActionsCloseFrom(&actions, 3)
        let path = Self.app
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let result = withCleanSpawnAttributes { posix_spawn(&pid, path, &actions, $0, argv, environ) }
        guard result == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw OAuthError.userAgent("Latchkey's dialog could not be started (\(String(cString: strerror(result)))).")
        }
        self.pid = pid
        input = Mutex(toChild[1])
        output = fromChild[0]
    }

    deinit {
        closeInput()
        close(output)
    }

    /// `text` on the child's standard input, whole: blocks while the pipe is full (the child reads it at once).
    func send(_ text: String) {
        input.withLock { if $0 >= 0 { Descriptor(number: $0).write(text) } }
    }

    /// The child's input ends: it takes its dialog back.
    func closeInput() {
        input.withLock {
            if $0 >= 0 { close($0) }
            $0 = -1
        }
    }

    /// Taken back (nobody answered in time, the program left): the child is told to end, and made
    /// to two seconds later if it has not (one stuck opening the display hears nothing on its input).
    func takeBack() {
        signal(SIGTERM)
        closeInput()
        DispatchQueue.global().asyncAfter(deadline: .now() + 2) { [self] in signal(SIGKILL) }
    }

    private func signal(_ number: Int32) {
        reaped.withLock { if !$0 { _ = kill(pid, number) } }
    }

    /// Blocks until the child ends (on a thread of its own: `BlockingWork`): what it wrote, at most
    /// 64 KiB, and how it ended. Its output is the child's alone (the helpers keep it from whatever
    /// they start), so its end comes with the child's.
    func finish() -> (output: String, exit: AgentHelper.Exit) {
        let bytes = Descriptor(number: output).readAll(limit: 1 << 16)
        // Waited for without being reaped, then reaped under the lock `signal` takes: no signal can
        // reach a process that took the id meanwhile.
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
        var status: Int32 = 0
        reaped.withLock { reaped in
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            reaped = true
        }
        let exited = status & 0x7f == 0
        let code = exited ? (status >> 8) & 0xff : 1
        return (String(decoding: bytes, as: UTF8.self), AgentHelper.Exit(rawValue: code) ?? .failed)
    }
}

/// The agent's way of asking: a dialog per question, drawn by a `latchkey-app agent ask` of its
/// own; none without a display.
///
/// Whether there is a display is the probe's word (`AgentHelper.displayIsReachable`) until a
/// dialog finds otherwise (a display that takes connections and refuses the app's, a remote one):
/// that is kept for a while, and said by `canAsk` and `ask` alike, at once. So a name the agent
/// knows and one it does not are answered the same, in the same time.
final class ConsentChildren: ConsentAsker {
    let environment: [String: String]
    let logger: Logger
    /// When a dialog last found no display to open.
    private let noDisplaySince = Mutex<ContinuousClock.Instant?>(nil)
    static let noDisplayKept = Duration.seconds(30)

    init(environment: [String: String], logger: Logger) {
        self.environment = environment
        self.logger = logger
    }

    func ask(_ question: ConsentQuestion) async -> ConsentAnswer? {
        guard await canAsk else { return nil }
        let child: AppChild
        do { child = try AppChild(AgentHelper.ask) } catch {
            logger.error("The question could not be shown", metadata: ["why": "\(error)"])
            return nil
        }
        let prompt = ConsentPrompt(question).line + "\n"
        let (output, exit) = await withTaskCancellationHandler {
            // The prompt is written off the cooperative pool: a long one fills the pipe until the child reads it.
            await BlockingWork.run {
                child.send(prompt)
                return child.finish()
            }
        } onCancel: {
            // Taken back (nobody answered in time, or the program left): the dialog and its process go;
            // nobody waits for this answer any more.
            child.takeBack()
        }
        child.closeInput()
        switch exit {
        case .done: break
        case .noDisplay:
            foundNoDisplay()
            return nil
        case .cancelled, .failed, .misused:
            // Not the person's Deny: the dialog broke (or was taken back, and then nobody waits for this).
            if !Task.isCancelled {
                logger.error("The question's dialog ended without an answer", metadata: ["status": "\(exit.rawValue)"])
            }
            return nil
        }
        // Only an answer the dialog offered counts; anything else is Deny.
        switch ConsentAnswer(word: output.split(separator: "\n").first ?? "") {
        case .alwaysAllow? where question.offersAlways: return .alwaysAllow
        case .allowWhileConnected? where !question.offersAlways && question.offersWhileConnected: return .allowWhileConnected
        case .allowOnce?: return .allowOnce
        default: return .deny
        }
    }

    /// A helper found no display to open: believed over the probe for `noDisplayKept`.
    func foundNoDisplay() {
        noDisplaySince.withLock { $0 = .now }
    }

    var canAsk: Bool {
        get async {
            if let since = noDisplaySince.withLock({ $0 }), ContinuousClock.now - since < Self.noDisplayKept { return false }
            let environment = self.environment
            return await BlockingWork.run { AgentHelper.displayIsReachable(environment: environment) }
        }
    }
}
