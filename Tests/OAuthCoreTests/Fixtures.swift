import Foundation
import InstallLayout

@testable import OAuthCore

/// A throwaway directory per test, removed when the test lets go of it.
final class TemporaryDirectory: @unchecked Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("oauthcore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ text: String, to name: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }

    deinit { try? FileManager.default.removeItem(at: url) }
}

enum Fixtures {
    /// The repository's own presets, in the source tree this test binary was built in.
    static let presetDirectory = InstallLayout.current.sourceTree!.appendingPathComponent("data/providers")

    /// A catalog of the shipped presets that reads credentials as the app does (`LATCHKEY_…`).
    static func catalog(userDirectory: URL, environment: EnvironmentVariables = [:]) -> ProviderCatalog {
        ProviderCatalog(
            presetDirectories: [presetDirectory], userConfigDirectory: userDirectory, environment: environment,
            credentialPrefix: "LATCHKEY")
    }

    static func configuration(
        redirectURI: String = "https://app.example/callback", scopes: [String] = ["openid", "profile"], pkce: Bool = true,
        authorizationEndpoint: String = "https://id.example/authorize", issuer: String? = "https://id.example",
        parameters: [String: String] = [:], authentication: ProviderConfiguration.ClientAuthentication = .none,
        secret: String? = nil
    ) throws -> ProviderConfiguration {
        try ProviderConfiguration(
            id: "example", displayName: "Example", issuer: issuer.map { URL(string: $0)! },
            authorizationEndpoint: URL(string: authorizationEndpoint)!, tokenEndpoint: URL(string: "https://id.example/token")!,
            revocationEndpoint: URL(string: "https://id.example/revoke")!, userinfoEndpoint: URL(string: "https://id.example/me")!,
            clientID: "client-1", clientSecret: secret, clientAuthentication: authentication,
            redirectURI: URL(string: redirectURI)!, scopes: scopes, usePKCE: pkce, authorizationParameters: parameters)
    }

    /// The query of a URL as a dictionary (each name once).
    static func query(_ url: URL) -> [String: String] {
        let items = URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
    }

    /// The redirect URL the provider would send for `request`.
    static func redirect(_ request: AuthorizationRequest, _ query: String) -> URL {
        URL(string: "\(request.redirectURI.absoluteString)?\(query)")!
    }
}

/// A person's home for the zero-configuration path: a config directory read by a catalog of the
/// shipped presets (with `environment` as its variables), a discovery cache, private client
/// secrets, a token store, and `ZeroConfiguration` over them all.
struct ZeroConfigurationHome {
    let home: TemporaryDirectory
    let catalog: ProviderCatalog
    let secrets: FileClientSecretStore
    let tokens = MemoryTokenStore()

    init(environment: [String: String] = [:]) throws {
        home = try TemporaryDirectory()
        var catalog = Fixtures.catalog(userDirectory: home.url.appendingPathComponent("config"), environment: .given(environment))
        catalog.discovery = DiscoveryCache(directory: home.url.appendingPathComponent("cache"))
        self.catalog = catalog
        secrets = FileClientSecretStore(directory: home.url.appendingPathComponent("secrets"))
    }

    var providers: ZeroConfiguration { providers() }

    func providers(reserved: Set<String> = [], redirectURI: URL = URL(string: "http://127.0.0.1/callback")!) -> ZeroConfiguration {
        ZeroConfiguration(
            catalog: catalog, secrets: secrets, clientName: "Latchkey", redirectURI: redirectURI, tokens: tokens, reservedIDs: reserved)
    }

    /// Everything written under the temporary home, as one text.
    func everythingWritten() throws -> String {
        let paths = FileManager.default.enumerator(atPath: home.url.path)?.compactMap { $0 as? String } ?? []
        return paths.compactMap { try? String(contentsOf: home.url.appendingPathComponent($0), encoding: .utf8) }.joined()
    }
}

extension ProviderFile {
    /// A provider file of `object`'s keys, as a person would write it.
    init(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        try self.init(data: data, file: URL(fileURLWithPath: "/test/provider.json"))
    }
}

/// A server's document written as a Swift dictionary in a test, as OAuthCore reads one: written out by
/// JSONSerialization and read back by OAuthCore's own parser, so that it is just what a server sending
/// those members would be read as.
func json(_ object: [String: Any]) -> JSONValue {
    let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
    return JSONValue.object(parsing: data)!
}
