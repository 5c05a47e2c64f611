// latchkey-token-writer DIRECTORY: saves generation 1, 2, 3, … of a token through
// the real FileTokenStore, as fast as it can, until it is killed. It prints
// "writing" just before the first save. CrashConsistencyTests kill it with
// SIGKILL at random moments and read what is left.
//
// Each generation is consistent with itself (at-N, rt-N, an ID token of N…N), and
// large (256 KiB), so a write cut short would show as a file that does not parse
// or mixes two generations.
import Foundation
import OAuthCore

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: latchkey-token-writer DIRECTORY\n".utf8))
    exit(2)
}
let store = FileTokenStore(directory: URL(fileURLWithPath: CommandLine.arguments[1]))
// Unbuffered, so the line is out before the first save starts.
FileHandle.standardOutput.write(Data("writing\n".utf8))
var generation = 1
while true {
    let token = Token(
        accessToken: "at-\(generation)", refreshToken: "rt-\(generation)", scope: "openid",
        idToken: String(repeating: "\(generation % 10)", count: 256 * 1024),
        expiresAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(generation)))
    try store.save(token, for: "sandbox")
    generation += 1
}
