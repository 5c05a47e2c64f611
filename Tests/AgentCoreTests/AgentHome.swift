import AgentCore
import Foundation
import InstallLayout
import Logging
import OAuthCore
import TestSupport

/// A home of the agent's own for one test: the presets of the source tree, a config
/// directory (provider files, the allowed programs), a token file store, and a real
/// sandbox as the `sandbox` provider's issuer.
final class AgentHome: @unchecked Sendable {
    let root: URL
    let catalog: ProviderCatalog
    let store: FileTokenStore
    let sandbox: RunningSandbox
    let logger = Logger(label: "AgentCoreTests")
    /// Whether the sandbox provider binds its tokens to a DPoP key (`"dpop": true` in its file).
    let dpop: Bool

    init(sandbox arguments: [String] = [], dpop: Bool = false) async throws {
        self.dpop = dpop
        root = FileManager.default.temporaryDirectory.appendingPathComponent("agent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        var catalog = ProviderCatalog(
            presetDirectories: [InstallLayout.current.sourceTree!.appendingPathComponent("data/providers")],
            userConfigDirectory: root.appendingPathComponent("config"), environment: [:], credentialPrefix: "LATCHKEY")
        catalog.discovery = DiscoveryCache(directory: root.appendingPathComponent("cache"))
        self.catalog = catalog
        store = FileTokenStore(directory: root.appendingPathComponent("state"))
        sandbox = try await RunningSandbox.start(arguments)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var grants: ProgramGrants { ProgramGrants(file: root.appendingPathComponent("config/allowed-programs")) }

    /// A provider of the catalog; the sandbox preset served by this home's sandbox.
    func configuration(_ id: String) throws -> ProviderConfiguration {
        var configuration = try catalog.configuration(named: id, overrides: id == "sandbox" ? ["issuer": sandbox.baseURL] : [:])
        if id == "sandbox" { configuration.dpop = dpop }
        return configuration
    }

    /// The agent's broker over this home; `storeRecheck` zero: the store is read again at every request.
    func broker(storeRecheck: Duration = .zero, ended: TokenBroker.Ended? = nil) -> TokenBroker {
        TokenBroker(
            catalog: catalog, store: store, network: Network(), accounts: accounts, zeroConfiguration: nil, storeRecheck: storeRecheck,
            configure: { [self] id in try configuration(id) }, ended: ended)
    }

    var accounts: AccountList { AccountList(directory: root.appendingPathComponent("state/accounts")) }

    /// A sign-in through the sandbox's page, kept in this home's store, as the window would keep it;
    /// `another`: as an account beside those already there. Returns the token kept.
    @discardableResult
    func signIn(username: String = "ada", password: String = "engine", another: Bool = false) async throws -> Token {
        let provider = Provider(configuration: try configuration("sandbox"), store: store, accounts: accounts)
        return try await provider.signIn(
            using: FormPostingUserAgent(username: username, password: password), for: another ? .another : .inUse
        ).token
    }
}

/// The person, answering every question the same way, and counting them.
final class ScriptedPerson: ConsentAsker, @unchecked Sendable {
    private let lock = NSLock()
    private var _questions: [ConsentQuestion] = []
    let answer: ConsentAnswer?
    /// Held until released: questions pile up behind one another meanwhile.
    private let gate = DispatchSemaphore(value: 0)
    private let holds: Bool

    init(answering answer: ConsentAnswer?, holds: Bool = false) {
        self.answer = answer
        self.holds = holds
    }

    var questions: [ConsentQuestion] { lock.withLock { _questions } }

    func release() { gate.signal() }

    private var _withdrawn = false
    /// The agent took its question back (cancelled the asking task).
    var withdrawn: Bool { lock.withLock { _withdrawn } }

    var canAsk: Bool { answer != nil }

    func ask(_ question: ConsentQuestion) async -> ConsentAnswer? {
        lock.withLock { _questions.append(question) }
        if holds {
            await withTaskCancellationHandler {
                await BlockingWork.run { [gate] in gate.wait() }
            } onCancel: { [self] in
                lock.withLock { _withdrawn = true }
                gate.signal()
            }
        }
        return Task.isCancelled ? .deny : answer
    }
}

extension Caller {
    /// `identify`, nil where it refuses: what the tests compare.
    static func of(pid: Int32, uid: UInt32, own: OwnExecutable, proc: String = "/proc") -> Caller? {
        try? identify(pid: pid, uid: uid, own: own, proc: proc).get()
    }

    /// This test process, as the agent sees a caller.
    static var thisProcess: Caller { Caller.of(pid: getpid(), uid: getuid(), own: .none)! }

    /// Another process of this test's program (another pid), as a second copy of one program would ask.
    static var anotherOfThisProgram: Caller {
        let me = thisProcess
        return Caller(pid: me.pid + 1_000_000, uid: me.uid, program: me.program, file: me.file, commandLine: me.commandLine, started: 1)
    }
}

/// A Unix stream socket bound at `path` (not yet listening), or -1: a stale socket file, a display's
/// socket, an agent of a test's own.
func boundSocket(at path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard fd >= 0, bound == 0 else {
        close(fd)
        return -1
    }
    return fd
}
