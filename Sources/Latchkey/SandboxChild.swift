import Foundation
import Logging
import OAuthCore

/// The offline provider, started as a child on a free loopback port. Its
/// standard input is a pipe only this process holds: when Latchkey ends, by
/// quitting or by crashing, the pipe closes and the sandbox exits too.
final class SandboxChild {
    let process = Process()
    let baseURL: String
    private let input = Pipe()

    private init(executable: URL, stateFile: URL) throws {
        let output = Pipe()
        process.executableURL = executable
        process.arguments = ["--port", "0", "--exit-with-stdin", "--state-file", stateFile.path]
        process.standardInput = input
        process.standardOutput = output
        try process.run()

        var line = Data()
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(UInt8(ascii: "\n")), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("listening http://127.0.0.1:") else {
            process.terminate()
            throw OAuthError.invalidConfiguration("the offline sandbox provider did not start (it said: \(text.isEmpty ? "nothing" : text)).")
        }
        baseURL = String(text.dropFirst("listening ".count))
    }

    static func start(logger: Logger) throws -> SandboxChild {
        guard let executable = locate() else {
            throw OAuthError.invalidConfiguration(
                "the offline sandbox provider (latchkey-sandbox) is neither next to latchkey nor on PATH. Use --provider to sign in to a real provider.")
        }
        // Grants and tokens the sandbox issued survive its restarts, as a real provider's would.
        let directory = FileTokenStore.defaultDirectory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let child = try SandboxChild(executable: executable, stateFile: directory.appendingPathComponent("sandbox-provider.json"))
        logger.info("Sandbox provider (offline demo) at \(child.baseURL)")
        return child
    }

    func stop() {
        guard process.isRunning else { return }
        try? input.fileHandleForWriting.close()
        process.terminate()
        process.waitUntilExit()
    }

    private static func locate() -> URL? {
        let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("latchkey-sandbox")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("latchkey-sandbox")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
