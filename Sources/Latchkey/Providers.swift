import Foundation
import LatchkeyCore
import Logging
import OAuthCore

/// The providers this run can show, and how each becomes a configuration: the
/// presets and the person's own files (from the catalog), the file given with
/// `--provider-file`, and the offline sandbox, started the first time it is
/// chosen and stopped when Latchkey ends.
final class Providers: @unchecked Sendable {
    let catalog: ProviderCatalog
    /// `--provider-file`: its id, and where it is.
    let file: (id: String, url: URL)?
    /// What the window lists: the sandbox first, then every other provider by name.
    /// Read once, at start: the catalog's files are not read again at each render.
    let entries: [(id: String, displayName: String)]
    private let logger: Logger
    // Guarded by `lock`: the sandbox child, once started.
    private let lock = NSLock()
    private var sandbox: SandboxChild?

    static let sandboxID = "sandbox"

    init(catalog: ProviderCatalog, file: URL?, logger: Logger) throws {
        self.catalog = catalog
        self.logger = logger
        var list = catalog.availableProviders
        if let file {
            let configuration = try catalog.configuration(file: file)
            self.file = (configuration.id, file)
            if !list.contains(where: { $0.id == configuration.id }) { list.append((configuration.id, configuration.displayName)) }
        } else {
            self.file = nil
        }
        entries = list.filter { $0.id == Self.sandboxID } + list.filter { $0.id != Self.sandboxID }
    }

    /// The provider `id`, and what must happen before it is first spoken to
    /// (the sandbox child starting); throws a sentence when it cannot be used.
    func configuration(for id: String) throws -> (ProviderConfiguration, ready: @Sendable () throws -> Void) {
        if let file, file.id == id {
            return (try catalog.configuration(file: file.url), {})
        }
        guard id == Self.sandboxID else { return (try catalog.configuration(named: id), {}) }
        let child = try lock.withLock {
            if let sandbox { return sandbox }
            let child = try SandboxChild.prepare(logger: logger)
            sandbox = child
            return child
        }
        let configuration = try catalog.configuration(named: Self.sandboxID, overrides: ["issuer": child.baseURL])
        return (configuration, { try child.waitUntilReady() })
    }

    /// Stops the sandbox child if one was started.
    func stop() {
        lock.withLock { sandbox }?.stop()
    }
}
