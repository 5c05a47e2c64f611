import Foundation
import OAuthCore
import Synchronization

/// The real `latchkey-sandbox` binary, started on a free loopback port for one
/// test and stopped when the test lets go of it.
///
/// Started with `await RunningSandbox.start(…)`: waiting for its address blocks, so it happens
/// on a thread of its own, never on one of the cooperative pool's few (a suite's `init` runs
/// once per test, and hundreds of them start at once).
public final class RunningSandbox: @unchecked Sendable {
    public let process: Spawned
    public let baseURL: String
    public let logURL: URL
    /// The sandbox's standard input; closing it ends the sandbox (always started with --exit-with-stdin).
    public let input = Pipe().closedOnExec()

    /// Where `swift build` put the executables: beside this test binary.
    public static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["LATCHKEY_BIN_DIR"] {
            return URL(fileURLWithPath: dir)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Starts a sandbox with `arguments` and waits, on a thread of its own, for its address.
    public static func start(_ arguments: [String] = []) async throws -> RunningSandbox {
        try await BlockingWork.run { Result { try RunningSandbox(arguments) } }.get()
    }

    private init(_ arguments: [String]) throws {
        let executable = Self.binDirectory.appendingPathComponent("latchkey-sandbox")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw SandboxTestError("latchkey-sandbox is not built at \(executable.path); run `swift build` first.")
        }
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-sandbox-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let stdout = Pipe().closedOnExec()
        let log = open(logURL.path, O_WRONLY | O_CLOEXEC)
        defer { close(log) }
        // Always --exit-with-stdin, whose other end only this process holds: a sandbox ends with the test run
        // even when nothing let go of it (one held by a task that outlived its test outlived every
        // `swift test`, an orphan listening on a port until the machine restarted).
        let ending = arguments.contains("--exit-with-stdin") ? [] : ["--exit-with-stdin"]
        process = try Spawned(
            executable.path, ["--port", "0"] + ending + arguments, input: input.fileHandleForReading.fileDescriptor,
            output: stdout.fileHandleForWriting.fileDescriptor, errors: log)
        // Ours no more: the child has its copy, and end-of-file must come when it goes.
        try? stdout.fileHandleForWriting.close()

        // The first line on stdout is "listening http://127.0.0.1:PORT".
        let text = (stdout.firstLine(within: 15, while: process) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening http://127.0.0.1:") else {
            process.kill()
            let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            throw SandboxTestError(
                "latchkey-sandbox printed \(text.debugDescription) instead of its address; it said: \(log)")
        }
        baseURL = String(text.dropFirst("listening ".count))
    }

    public var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    /// Stops it now (SIGKILL), as a server that went away: nothing answers at its address after
    /// this returns. Its port is then held (bound, never listened on) while this is kept, so that
    /// no server of another test gets it and answers there; unless a connection the sandbox had
    /// lingers half closed, which keeps others off the port as well (a bind to port 0 never picks
    /// a port anybody has bound). Held from the reaper's thread the moment the sandbox is gone:
    /// held once this task ran again, the port stood free for as long as a starved pool took to
    /// run it, and on a loaded machine another test's sandbox once started there in between.
    public func stop() async {
        let port = URLComponents(string: baseURL)?.port
        await process.end { [self] in
            let held = port.flatMap { HeldPort($0) }
            heldPort.withLock { $0 = held }
        }
    }

    private let heldPort = Mutex<HeldPort?>(nil)

    /// SIGTERM, and SIGKILL from a thread of its own should the shutdown linger past two
    /// seconds (not the test's problem): a deinit runs on whichever thread let go last.
    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            BlockingWork.detachThread { [process] in
                if process.wait(timeout: 2) == nil { process.kill() }
            }
        }
        try? FileManager.default.removeItem(at: logURL)
    }
}

public struct SandboxTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
