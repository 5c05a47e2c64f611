import Foundation
import TestSupport
import Testing

@testable import OAuthCore

/// A process killed while it writes a token leaves the old token or a new one,
/// whole: never a mix of two, never a file that does not read, never no file.
@Suite struct CrashConsistencyTests {
    static let kills = 100

    /// What a generation written by latchkey-token-writer looks like; nil if the
    /// token is not one of them, or mixes two.
    static func generation(of token: Token) -> Int? {
        guard token.accessToken.hasPrefix("at-"), let n = Int(token.accessToken.dropFirst(3)),
            token.refreshToken == "rt-\(n)",
            token.idToken == String(repeating: "\(n % 10)", count: 256 * 1024),
            token.expiresAt == Date(timeIntervalSince1970: 1_800_000_000 + Double(n))
        else { return nil }
        return n
    }

    @Test func aKilledWriterLeavesTheOldTokenOrTheNewOneWhole() async throws {
        let writer = RunningSandbox.binDirectory.appendingPathComponent("latchkey-token-writer")
        try #require(FileManager.default.isExecutableFile(atPath: writer.path), "latchkey-token-writer is not built")
        let directory = try TemporaryDirectory()
        let store = FileTokenStore(directory: directory.url)
        let old = Token(
            accessToken: "at-0", refreshToken: "rt-0", scope: "openid", idToken: String(repeating: "0", count: 256 * 1024),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        var generator = SystemRandomNumberGenerator()
        var seen: [Int: Int] = [:]

        for _ in 0..<Self.kills {
            try store.save(old, for: "sandbox")
            let output = Pipe().closedOnExec()
            let process = try Spawned(writer.path, [directory.url.path], output: output.fileHandleForWriting.fileDescriptor)
            try? output.fileHandleForWriting.close()
            // A random moment in the first ~40 ms of writing: before the first save
            // is whole, in the middle of one, or between two. Timed on a thread of its own:
            // a task resumed late would stretch the moment past the writes.
            let moment = UInt32.random(in: 0...40_000, using: &generator)
            let first = await BlockingWork.run { () -> String? in
                let line = output.firstLine(within: 30, while: process)
                usleep(moment)
                kill(process.processIdentifier, SIGKILL)
                return line
            }
            #expect(first == "writing")
            let status = await process.exit(timeout: 30)
            #expect(
                status == SIGKILL || status == 128 + SIGKILL, "the writer must die by the kill, not before: \(String(describing: status))")

            let left = try store.load(for: "sandbox")
            let generation = try #require(
                left.flatMap(Self.generation), "a killed write left \(left == nil ? "no token" : "a token that mixes two")")
            seen[generation == 0 ? 0 : 1, default: 0] += 1
        }
        // Both outcomes happened, so the kills really landed before and after a save completed.
        #expect(seen.values.reduce(0, +) == Self.kills)
        #expect(seen[1, default: 0] > 0, "no kill came after a completed save: \(seen)")
        // Beside the token, nothing but the temporary files of writes that were killed: none set aside as damaged.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files.filter { !$0.hasSuffix(".tmp") } == ["sandbox.json"])
    }
}
