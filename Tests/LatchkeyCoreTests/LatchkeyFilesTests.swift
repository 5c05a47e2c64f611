import Foundation
import InstallLayout
import LatchkeyCore
import OAuthCore
import Testing

/// Where Latchkey looks for its files, installed and in a source tree, on real directories.
@Suite struct LatchkeyFilesTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("layout-\(UUID().uuidString)")

    func make(_ relative: String, file: Bool = false) throws -> URL {
        let url = root.appendingPathComponent(relative)
        if file {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("{}".utf8).write(to: url)
        } else {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        return url
    }

    @Test func anInstalledProgramFindsItsFilesUnderItsPrefix() throws {
        let layout = InstallLayout(executableDirectory: try make("usr/bin"))
        #expect(layout.prefix.path == root.appendingPathComponent("usr").path)
        #expect(layout.share("latchkey/providers").path == root.appendingPathComponent("usr/share/latchkey/providers").path)
        #expect(layout.lib("latchkey/x.so").path == root.appendingPathComponent("usr/lib/latchkey/x.so").path)
        #expect(layout.beside("latchkey-sandbox").path == root.appendingPathComponent("usr/bin/latchkey-sandbox").path)
        #expect(layout.sourceTree == nil, "installed: no source tree")
    }

    @Test func aBuildInASourceTreeFindsTheTree() throws {
        _ = try make("tree/Package.swift", file: true)
        let layout = InstallLayout(executableDirectory: try make("tree/.build/x86_64-unknown-linux-gnu/debug"))
        #expect(layout.sourceTree?.path == root.appendingPathComponent("tree").path)
        // A .build without a package above it is no source tree: nothing is taken from a stray directory.
        let stray = InstallLayout(executableDirectory: try make("elsewhere/.build/debug"))
        #expect(stray.sourceTree == nil)
    }

    @Test func theCatalogLooksInTheOrderTheProvidersDocGives() throws {
        _ = try make("tree/Package.swift", file: true)
        let layout = InstallLayout(executableDirectory: try make("tree/.build/debug"))
        let catalog = LatchkeyFiles.catalog(
            environment: [
                "HOME": root.appendingPathComponent("home").path, "LATCHKEY_PROVIDERS_DIR": "/explicit",
                "XDG_DATA_DIRS": "/opt/share:/usr/share",
            ], layout: layout)
        #expect(
            catalog.presetDirectories.map(\.path) == [
                "/explicit", root.appendingPathComponent("home/.local/share/latchkey/providers").path,
                root.appendingPathComponent("tree/.build/share/latchkey/providers").path,
                "/opt/share/latchkey/providers", "/usr/share/latchkey/providers",
                root.appendingPathComponent("tree/data/providers").path,
            ])
        #expect(catalog.userConfigDirectory.path == root.appendingPathComponent("home/.config/latchkey").path)
        #expect(catalog.credentialVariable(for: "github", "CLIENT_ID") == "LATCHKEY_GITHUB_CLIENT_ID")
    }

    @Test func theRunningLayoutIsTheExecutablesOwnDirectorySymlinksResolved() {
        let resolved = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        #expect(InstallLayout.current.executableDirectory.path == resolved.standardizedFileURL.path)
        #expect(InstallLayout.current.executableDirectory.path.hasPrefix("/"))
    }

    @Test func oneVariableIsReadAsTheWholeEnvironmentHasIt() {
        let environment = ProcessInfo.processInfo.environment
        for name in ["HOME", "PATH", "LATCHKEY_NO_SUCH_VARIABLE"] {
            #expect(EnvironmentVariables.process[name] == environment[name], "\(name)")
        }
        #expect(EnvironmentVariables.process["PATH"] != nil)
        #expect(EnvironmentVariables.process.nonEmpty("LATCHKEY_NO_SUCH_VARIABLE") == nil)
        let given: EnvironmentVariables = ["HOME": "/home/someone", "EMPTY": ""]
        #expect(given["HOME"] == "/home/someone")
        #expect(given["EMPTY"] == "" && given.nonEmpty("EMPTY") == nil)
        #expect(given["PATH"] == nil)
    }

    /// XDG's rule: the variable when set and not empty, else the fallback under the home folder.
    @Test func anXDGBaseDirectoryFallsBackUnderTheHomeFolder() {
        let set: EnvironmentVariables = ["XDG_STATE_HOME": "/srv/state", "HOME": "/home/someone"]
        #expect(set.baseDirectory("XDG_STATE_HOME", else: ".local/state").path == "/srv/state")
        let empty: EnvironmentVariables = ["XDG_STATE_HOME": "", "HOME": "/home/someone"]
        #expect(empty.baseDirectory("XDG_STATE_HOME", else: ".local/state").path == "/home/someone/.local/state")
        let homeless: EnvironmentVariables = ["HOME": ""]
        #expect(
            homeless.baseDirectory("XDG_CONFIG_HOME", else: ".config").path
                == URL(fileURLWithPath: PathText.home).appendingPathComponent(".config").path,
            "an empty HOME is the account's home folder, never the working directory")
    }

    @Test func thisBuildFindsTheRepositorysPresetsAndIcon() {
        let catalog = LatchkeyFiles.catalog()
        #expect(Set(catalog.presetNames).isSuperset(of: ["sandbox", "linkedin", "github", "gitlab", "microsoft"]))
        #expect(LatchkeyFiles.iconDirectory() != nil)
    }
}
