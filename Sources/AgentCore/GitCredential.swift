import FoundationEssentials
import Loopback
import OAuthCore

/// git's credential helper protocol (git-credential(1)): git writes `key=value`
/// lines and a blank line; for `get` the helper answers with `username=` and
/// `password=` lines, or nothing (git then asks the next helper, or the person).
public struct GitCredential: Sendable, Equatable {
    public var attributes: [String: String]

    /// What git sent: the last value of a key counts; array keys (`wwwauth[]`) and lines without `=` are passed over.
    public init(parsing text: String) {
        var attributes: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            guard !key.hasSuffix("[]") else { continue }
            attributes[key] = String(line[line.index(after: equals)...])
        }
        self.attributes = attributes
    }

    public var host: String? { attributes["host"] }

    /// The provider among `providers` (id, git hosts) whose hosts include this remote's: over
    /// https, or over http only to this computer (a token never crosses a network in clear text).
    public func provider(among providers: [(id: String, gitHosts: [String])]) -> String? {
        guard let host = host?.lowercased(), !host.isEmpty, let scheme = attributes["protocol"] else { return nil }
        guard scheme == "https" || (scheme == "http" && Self.isLoopback(host)) else { return nil }
        return providers.first { $0.gitHosts.contains { $0.lowercased() == host } }?.id
    }

    /// The account this remote uses, by the provider's rules (`ProviderConfiguration.gitAccounts`):
    /// a rule naming a remote (`github.com/work-org/`) matches a remote whose host and path start so,
    /// one naming a directory (`~/src/work`, `/srv/repos`) a repository in it (`directory`: where git
    /// runs). The longest rule that matches wins; nil: none does.
    ///
    /// git says a remote's path only with `credential.useHttpPath` set; without it, only directory
    /// rules can match.
    public func account(rules: [String: String], directory: String, home: String) -> String? {
        // Compared as the host compares it (GitHub's and GitLab's paths in any case); a path that climbs
        // (`work-org/../other`, spelt out or percent-encoded) matches no remote rule.
        let path = Self.trimmed(attributes["path"] ?? "").lowercased()
        let climbs = path.split(separator: "/").contains("..") || path.contains("%2e")
        var best: (length: Int, account: String)?
        for (rule, account) in rules where !rule.isEmpty && !account.isEmpty {
            let matches: Bool
            if rule.hasPrefix("/") || rule == "~" || rule.hasPrefix("~/") {
                let folder = Self.trimmed(rule.hasPrefix("~") ? home + rule.dropFirst() : rule)
                matches = folder.isEmpty || directory == folder || directory.hasPrefix(folder + "/")
            } else {
                // host[/path]: the host in any case, the path as git sends it (without its leading slash).
                let parts = rule.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
                let prefix = parts.count > 1 ? Self.trimmed(parts[1]).lowercased() : ""
                matches =
                    parts[0].lowercased() == host?.lowercased()
                    && (prefix.isEmpty || (!climbs && (path == prefix || path.hasPrefix(prefix + "/"))))
            }
            if matches, rule.count > best?.length ?? -1 { best = (rule.count, account) }
        }
        return best?.account
    }

    /// A path or remote without the slashes it may end with.
    private static func trimmed(_ text: some StringProtocol) -> String {
        var text = String(text)
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    /// The answer to `get`.
    public static func answer(username: String, token: AgentToken) -> String {
        var lines = ["username=\(username)", "password=\(token.accessToken)"]
        // git 2.41 and later drop the credential once it expires; earlier ones pass the key over.
        if let expiresAt = token.expiresAt { lines.append("password_expiry_utc=\(Int(expiresAt.timeIntervalSince1970))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `host` or `host:port` is an IP literal of this computer (Loopback's rule: not `localhost`, a name).
    static func isLoopback(_ host: String) -> Bool {
        var name = host
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            name = String(name[...close])
        } else if name.filter({ $0 == ":" }).count == 1, let colon = name.firstIndex(of: ":") {
            name = String(name[..<colon])
        }
        return Loopback.isLoopback(host: name)
    }
}

/// Tokens a git server refused (`git credential erase` hands back the refused password): the next
/// `get` renews rather than hand out the same token again. Only a SHA-256 of each is kept, per
/// provider, in a private directory; nothing is ever deleted from the sign-in itself.
public struct RefusedTokens: Sendable {
    public let directory: URL

    public init(directory: URL) {
        self.directory = directory
    }

    public func refuse(_ token: String, provider: String) {
        var kept = hashes(provider)
        kept.insert(Hex.sha256(token))
        PrivateFile.writeOwn(Data(kept.sorted().joined(separator: "\n").utf8), to: file(provider), in: directory)
    }

    public func isRefused(_ token: String, provider: String) -> Bool {
        hashes(provider).contains(Hex.sha256(token))
    }

    /// A renewed token was handed out: what was refused before is of no more use.
    public func clear(provider: String) {
        guard !hashes(provider).isEmpty else { return }
        try? FileManager.default.removeItem(at: file(provider))
    }

    private func file(_ provider: String) -> URL { directory.appendingPathComponent(Hex.sha256(provider).prefix(16) + ".refused") }

    private func hashes(_ provider: String) -> Set<String> {
        guard let data = PrivateFile.ownContents(file(provider), in: directory) else { return [] }
        return Set(String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
    }
}
