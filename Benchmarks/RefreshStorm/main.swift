// latchkey-refresh-storm: 1000 concurrent AuthSession.freshToken() calls on an
// expired token, against the real latchkey-sandbox. Alternates, pair by pair,
// one plain refresh round trip (the baseline) with one storm, and prints JSON.
import Foundation
import InstallLayout
import Logging
import OAuthCore

let callers = 1000
let pairs = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 12
LoggingSystem.bootstrap { label in
    var handler = StreamLogHandler.standardError(label: label)
    handler.logLevel = .warning
    return handler
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("latchkey-refresh-storm: \(message)\n".utf8))
    exit(1)
}

// The sandbox, from beside this binary.
let directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
let sandbox = Process()
sandbox.executableURL = directory.appendingPathComponent("latchkey-sandbox")
// Tokens live 30 s; the session looks 40 s ahead, so every stored token is due for refresh.
sandbox.arguments = ["--port", "0", "--log-level", "warning", "--exit-with-stdin", "--access-token-ttl", "30"]
let output = Pipe()
let input = Pipe()
sandbox.standardOutput = output
sandbox.standardInput = input
do { try sandbox.run() } catch { fail("cannot start latchkey-sandbox: \(error)") }
var line = Data()
while !line.contains(UInt8(ascii: "\n")) {
    let chunk = output.fileHandleForReading.availableData
    if chunk.isEmpty { fail("latchkey-sandbox said nothing") }
    line.append(chunk)
}
let base = String(decoding: line, as: UTF8.self).split(separator: " ")[1].trimmingCharacters(in: .whitespacesAndNewlines)

guard let tree = InstallLayout.current.sourceTree else { fail("run from the source tree: make bench") }
let presets = tree.appendingPathComponent("data/providers")
let configuration = try ProviderCatalog(
    presetDirectories: [presets], userConfigDirectory: URL(fileURLWithPath: "/nonexistent")
).configuration(named: "sandbox", overrides: ["issuer": base])
let transport = CurlTransport.shared
let client = TokenClient(configuration: configuration)

/// One sign-in, the way a browser would answer the sandbox's form.
func signIn() async throws -> Token {
    let request = AuthorizationRequest(configuration: configuration)
    let page = try await transport.send(HTTPRequest(method: "GET", url: request.url))
    let html = String(decoding: page.body, as: UTF8.self)
    guard let range = html.range(of: #"name="request_id" value="([^"]+)""#, options: .regularExpression) else {
        fail("no sign-in form")
    }
    let id = html[range].split(separator: "\"")[3]
    let answer = try await transport.send(
        HTTPRequest(
            method: "POST", url: URL(string: "\(base)/authorize")!,
            headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Data("request_id=\(id)&username=ada&password=engine&action=allow".utf8)))
    guard let location = answer.header("location"), let redirect = URL(string: location) else { fail("no redirect") }
    let response = try AuthorizationResponse(redirectURL: redirect, for: request)
    return try await client.exchange(response, for: request)
}

func refreshGrants() async throws -> Int {
    let stats = try await transport.send(HTTPRequest(method: "GET", url: URL(string: "\(base)/_admin/stats")!))
    return (try JSONSerialization.jsonObject(with: stats.body) as? [String: Any])?["refresh_grants"] as? Int ?? -1
}

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}

var singles: [Double] = []
var storms: [Double] = []
var calmStorms: [Double] = []
var oneCallers: [Double] = []
var refreshesPerStorm: [Int] = []
var distinctTokens: [Int] = []
let clock = ContinuousClock()

for pair in 0...pairs {  // pair 0 warms up and is not counted
    // A: one refresh round trip with a plain client.
    let token = try await signIn()
    let singleStart = clock.now
    _ = try await client.refresh(token)
    let single = clock.now - singleStart

    // B: the storm, on a token the session believes expired.
    let store = MemoryTokenStore()
    let session = AuthSession(
        configuration: configuration, store: store, tokenClient: client, now: { Date().addingTimeInterval(40) })
    try await session.signIn(with: try await signIn())
    let before = try await refreshGrants()
    let start = clock.now
    let tokens = try await withThrowingTaskGroup(of: String.self) { group in
        for _ in 0..<callers { group.addTask { try await session.freshToken().accessToken } }
        var seen = Set<String>()
        for try await token in group { seen.insert(token) }
        return seen
    }
    let storm = clock.now - start
    let after = try await refreshGrants()

    // C: the same 1000 callers on a token that needs no refresh: what the callers alone cost.
    let calmStart = clock.now
    try await withThrowingTaskGroup(of: String.self) { group in
        for _ in 0..<callers { group.addTask { try await session.freshToken().accessToken } }
        for try await _ in group {}
    }
    let calm = clock.now - calmStart

    // D: one caller on a token the session believes expired: the same session's refresh (the
    // token endpoint, the ID token's signature against the provider's keys, the store), alone.
    let alone = AuthSession(
        configuration: configuration, store: MemoryTokenStore(), tokenClient: client, now: { Date().addingTimeInterval(40) })
    try await alone.signIn(with: try await signIn())
    let aloneStart = clock.now
    _ = try await alone.freshToken()
    let oneCaller = clock.now - aloneStart
    if pair > 0 {
        oneCallers.append(milliseconds(oneCaller))
        singles.append(milliseconds(single))
        storms.append(milliseconds(storm))
        calmStorms.append(milliseconds(calm))
        refreshesPerStorm.append(after - before)
        distinctTokens.append(tokens.count)
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

let result: [String: Any] = [
    "callers": callers, "pairs": pairs,
    "single_refresh_ms": singles, "storm_ms": storms,
    "median_single_refresh_ms": median(singles), "median_storm_ms": median(storms),
    "no_refresh_storm_ms": calmStorms, "median_no_refresh_storm_ms": median(calmStorms),
    "one_caller_refresh_ms": oneCallers, "median_one_caller_refresh_ms": median(oneCallers),
    "refresh_requests_per_storm": refreshesPerStorm, "distinct_tokens_per_storm": distinctTokens,
]
print(String(decoding: try JSONSerialization.data(withJSONObject: result, options: [.sortedKeys]), as: UTF8.self))
try? input.fileHandleForWriting.close()
sandbox.terminate()
