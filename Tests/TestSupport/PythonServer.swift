import Foundation
import OAuthCore

#if canImport(Glibc)
    import Glibc
#endif

/// A small Python server on 127.0.0.1 for a test: the script binds port 0 and
/// prints the port it got as its first line. Stopped with SIGKILL (the child may
/// inherit a mask that blocks SIGTERM from the test runner).
public final class PythonServer: @unchecked Sendable {
    public let process: Spawned
    public let port: Int

    /// Starts the script and waits, on a thread of its own, for the port it prints.
    public static func start(script: String, arguments: [String] = [], what: String) async throws -> PythonServer {
        try await BlockingWork.run { Result { try PythonServer(script: script, arguments: arguments, what: what) } }.get()
    }

    private init(script: String, arguments: [String], what: String) throws {
        let output = Pipe().closedOnExec()
        process = try Spawned("/usr/bin/python3", ["-c", script] + arguments, output: output.fileHandleForWriting.fileDescriptor)
        try? output.fileHandleForWriting.close()
        let line = output.firstLine(within: 30, while: process) ?? ""
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.kill()
            throw SandboxTestError("\(what) did not start: \(line)")
        }
        self.port = port
    }

    public func stop() {
        process.kill()
    }
}
