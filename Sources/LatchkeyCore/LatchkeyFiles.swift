import AgentCore
import FoundationEssentials
import InstallLayout
import OAuthCore

/// Latchkey's own names for its files, directories and variables: what
/// OAuthCore leaves to the program. Installed, everything is under the prefix
/// of the running executable (see `InstallLayout`); run from its source tree
/// (`make run`), the tree's `data/` serves.
public enum LatchkeyFiles {
    /// The directory name under XDG's data, config and state homes.
    public static let application = "latchkey"
    /// `LATCHKEY_<ID>_CLIENT_ID`, `LATCHKEY_<ID>_CLIENT_SECRET`.
    public static let credentialPrefix = "LATCHKEY"

    /// The providers Latchkey knows: `$LATCHKEY_PROVIDERS_DIR`, then the
    /// person's `$XDG_DATA_HOME/latchkey/providers`, the installed
    /// `<prefix>/share/latchkey/providers`, the system's XDG data directories,
    /// and last the source tree's `data/providers`; credentials from
    /// `$XDG_CONFIG_HOME/latchkey/<id>.json` or the environment; discovery documents
    /// of providers that name only their issuer kept in `$XDG_CACHE_HOME/latchkey/discovery`.
    public static func catalog(
        environment: EnvironmentVariables = .process, layout: InstallLayout = .current
    ) -> ProviderCatalog {
        var directories: [URL] = []
        if let explicit = environment.nonEmpty("LATCHKEY_PROVIDERS_DIR") {
            directories.append(URL(fileURLWithPath: explicit))
        }
        directories.append(
            environment.baseDirectory("XDG_DATA_HOME", else: ".local/share").appendingPathComponent("\(application)/providers"))
        directories.append(layout.share("\(application)/providers"))
        for dataDirectory in (environment["XDG_DATA_DIRS"] ?? "/usr/local/share:/usr/share").split(separator: ":") {
            directories.append(URL(fileURLWithPath: String(dataDirectory)).appendingPathComponent("\(application)/providers"))
        }
        if let tree = layout.sourceTree { directories.append(tree.appendingPathComponent("data/providers")) }
        var catalog = ProviderCatalog(
            presetDirectories: directories,
            userConfigDirectory: environment.baseDirectory("XDG_CONFIG_HOME", else: ".config").appendingPathComponent(application),
            environment: environment, credentialPrefix: credentialPrefix,
            discovery: DiscoveryCache(directory: cacheDirectory(environment).appendingPathComponent("discovery")))
        catalog.programName = "Latchkey"
        return catalog
    }

    /// `LATCHKEY_CLIENT_ID_METADATA_DOCUMENT`: the https URL of a client metadata document
    /// describing Latchkey, used as its client id where a server takes them; nil when unset.
    public static func clientIDMetadataDocument() -> URL? {
        EnvironmentVariables.process.nonEmpty("LATCHKEY_CLIENT_ID_METADATA_DOCUMENT").flatMap { URL(string: $0) }
    }

    /// `$XDG_CACHE_HOME/latchkey`: what can be fetched again (discovery documents).
    public static func cacheDirectory(_ environment: EnvironmentVariables = .process) -> URL {
        environment.baseDirectory("XDG_CACHE_HOME", else: ".cache").appendingPathComponent(application)
    }

    /// Where the token file (and the sandbox's state) live: `$XDG_STATE_HOME/latchkey`.
    public static var stateDirectory: URL { FileTokenStore.defaultDirectory(for: application) }

    /// Client secrets typed into the set-up dialog while no keyring ran: one 0600 file per provider.
    public static var clientSecretDirectory: URL { stateDirectory.appendingPathComponent("client-secrets") }

    /// How often each resource's refusals were answered lately: a server that keeps asking is followed a few times only.
    public static var challengeRecords: ChallengeRecords {
        ChallengeRecords(directory: stateDirectory.appendingPathComponent("challenges"))
    }

    /// Each provider's accounts, and the one in use (`accounts/<provider>.json`; an earlier release kept
    /// who was last signed in there, which becomes the first account).
    public static var accounts: AccountList { AccountList(directory: stateDirectory.appendingPathComponent("accounts")) }

    /// The programs the person always allows to get tokens from the agent: beside the provider files,
    /// named so that the catalog never takes it for one (`*.json` are providers).
    public static var allowedPrograms: ProgramGrants {
        ProgramGrants(
            file: configDirectory.appendingPathComponent("allowed-programs"))
    }

    /// Which kinds of notice the person wants (`latchkey notifications`): beside the provider files,
    /// named so that the catalog never takes it for one.
    public static var notificationSettings: URL {
        configDirectory.appendingPathComponent("notifications")
    }

    /// When the agent last said that each sign-in ends soon (`SignInNotices`).
    public static var noticesSaid: URL { stateDirectory.appendingPathComponent("notices-said.json") }

    /// The provider last chosen in the window, remembered across launches.
    public static func chosenProvider(in directory: URL = stateDirectory) -> String? {
        let text = try? String(contentsOf: directory.appendingPathComponent(chosenProviderFile), encoding: .utf8)
        return text.map { $0.trimmed() }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Remembers `id` as the provider chosen; a failure only means the next launch starts elsewhere.
    public static func rememberChosenProvider(_ id: String, in directory: URL = stateDirectory) {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try? Data("\(id)\n".utf8).write(to: directory.appendingPathComponent(chosenProviderFile), options: .atomic)
    }

    private static let chosenProviderFile = "chosen-provider"

    /// The app's icon directory: installed under `<prefix>/share/icons`, or the source tree's `data/icons`.
    public static func iconDirectory(layout: InstallLayout = .current) -> URL? {
        let icon = "hicolor/scalable/apps/io.github.latchkey.Latchkey.svg"
        let candidates = [layout.share("icons")] + (layout.sourceTree.map { [$0.appendingPathComponent("data/icons")] } ?? [])
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent(icon).path) }?
            .appendingPathComponent("hicolor/scalable/apps")
    }

    /// `~/.config/latchkey`: the person's provider files, and beside them what is not one.
    private static var configDirectory: URL {
        EnvironmentVariables.process.baseDirectory("XDG_CONFIG_HOME", else: ".config").appendingPathComponent(application)
    }

}
