import Foundation

/// The real `latchkey-sandbox` binary, started on a free loopback port for one
/// test and stopped when the test lets go of it.
public final class RunningSandbox: @unchecked Sendable {
    public let process = Process()
    public let baseURL: String
    public let logURL: URL
    /// The sandbox's standard input; closing it ends a sandbox started with --exit-with-stdin.
    public let input = Pipe()

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
        let stdout = Pipe()
        process.standardInput = input
        process.executableURL = executable
        process.arguments = ["--port", "0"] + arguments
        process.standardOutput = stdout
        process.standardError = try FileHandle(forWritingTo: logURL)
        try process.run()

        // The first line on stdout is "listening http://127.0.0.1:PORT".
        var line = Data()
        let reader = stdout.fileHandleForReading
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(UInt8(ascii: "\n")), Date() < deadline {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening http://127.0.0.1:") else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let log = (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
            throw SandboxTestError(
                "latchkey-sandbox printed \(text.debugDescription) instead of its address; it said: \(log)")
        }
        baseURL = String(text.dropFirst("listening ".count))
    }

    public var log: String { (try? String(contentsOf: logURL, encoding: .utf8)) ?? "" }

    deinit {
        if process.isRunning {
            process.terminate()
            // A graceful shutdown that lingers past two seconds is not the test's problem.
            let deadline = Date().addingTimeInterval(2)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: logURL)
    }
}

public struct SandboxTestError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
