import Foundation

/// The real `latchkey-sandbox` binary, started on a free loopback port for one
/// test and stopped when the test lets go of it.
public final class RunningSandbox: @unchecked Sendable {
    public let process = Process()
    public let baseURL: String
    public let logURL: URL
    /// The sandbox's standard input; closing it ends a sandbox started with --exit-with-stdin.
    public let input = Pipe().closedOnExec()

    /// Where `swift build` put the executables: beside this test binary.
    public static var binDirectory: URL {
        if let dir = ProcessInfo.processInfo.environment["LATCHKEY_BIN_DIR"] {
            return URL(fileURLWithPath: dir)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    public init(_ arguments: [String] = []) throws {
        let executable = Self.binDirectory.appendingPathComponent("latchkey-sandbox")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw SandboxTestError("latchkey-sandbox is not built at \(executable.path); run `swift build` first.")
        }
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("latchkey-sandbox-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let stdout = Pipe().closedOnExec()
        process.standardInput = input
        process.executableURL = executable
        process.arguments = ["--port", "0"] + arguments
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: logURL)
        try process.run()

        // The first line on stdout is "listening http://127.0.0.1:PORT".
        let text = (stdout.firstLine(within: 15, while: process) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening http://127.0.0.1:") else {
            if ChildExit.poll(process) == nil { kill(process.processIdentifier, SIGKILL) }
            ChildExit.wait(for: process, timeout: 10)
            let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            throw SandboxTestError(
                "latchkey-sandbox printed \(text.debugDescription) instead of its address; it said: \(log)")
        }
        baseURL = String(text.dropFirst("listening ".count))
    }

    public var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    deinit {
        if ChildExit.poll(process) == nil {
            kill(process.processIdentifier, SIGTERM)
            // A graceful shutdown that lingers past two seconds is not the test's problem.
            if ChildExit.wait(for: process, timeout: 2) == nil {
                kill(process.processIdentifier, SIGKILL)
                ChildExit.wait(for: process, timeout: 5)
            }
        }
        try? FileManager.default.removeItem(at: logURL)
    }
}

public struct SandboxTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
