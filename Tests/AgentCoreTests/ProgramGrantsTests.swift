import AgentCore
import Foundation
import Testing

@Suite struct ProgramGrantsTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grants-\(UUID().uuidString)")
    var file: URL { directory.appendingPathComponent("config/allowed-programs") }
    let git = ExecutableFile(device: 1, inode: 42, size: 4096, modified: 1_700_000_000)

    func caller(_ path: String = "/usr/bin/git", file: ExecutableFile, flatpak: String? = nil) -> Caller {
        Caller(pid: 1, uid: getuid(), program: Program(path: path, flatpakID: flatpak), file: file, commandLine: [path])
    }

    @Test func aProgramIsAskedUntilAlwaysAllowedAndAgainOnceForgotten() throws {
        let grants = ProgramGrants(file: file)
        #expect(grants.decision(for: caller(file: git), provider: "github") == .unknown)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: ["repo"])
        #expect(grants.decision(for: caller(file: git), provider: "github") == .allowed)
        #expect(grants.decision(for: caller(file: git), provider: "gitlab") == .unknown, "one provider at a time")
        #expect(grants.decision(for: caller("/usr/local/bin/git", file: git), provider: "github") == .unknown, "another path")
        try grants.forget(Program(path: "/usr/bin/git"), provider: "github")
        #expect(grants.decision(for: caller(file: git), provider: "github") == .unknown)
    }

    @Test func aProgramWhoseExecutableChangedIsAskedAgain() throws {
        let grants = ProgramGrants(file: file)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: [])
        var upgraded = git
        upgraded.inode = 43
        #expect(grants.decision(for: caller(file: upgraded), provider: "github") == .changed)
    }

    @Test func aFlatpakAppIsAllowedByItsAppIDAndNeverByAPath() throws {
        let grants = ProgramGrants(file: file)
        // latchkey agent allow --flatpak org.example.Notes github: no path, no file.
        try grants.allow(Program(path: "", flatpakID: "org.example.Notes"), file: nil, provider: "github", scopes: [])
        #expect(grants.decision(for: caller("/app/bin/notes", file: git, flatpak: "org.example.Notes"), provider: "github") == .allowed)
        #expect(grants.decision(for: caller("/app/bin/notes", file: git, flatpak: "org.example.Other"), provider: "github") == .unknown)
        // A host program allowed by path does not cover a Flatpak app whose path inside its sandbox is the same.
        try grants.allow(Program(path: "/usr/bin/python3"), file: nil, provider: "gitlab", scopes: [])
        #expect(grants.decision(for: caller("/usr/bin/python3", file: git, flatpak: "org.example.Notes"), provider: "gitlab") == .unknown)
        #expect(grants.decision(for: caller("/usr/bin/python3", file: git), provider: "gitlab") == .allowed)
        // Allowed in the dialog, a Flatpak app stays allowed through its updates.
        try grants.allow(Program(path: "/app/bin/notes", flatpakID: "org.example.Notes"), file: git, provider: "gitlab", scopes: [])
        var updated = git
        updated.inode += 1
        #expect(grants.decision(for: caller("/app/bin/notes", file: updated, flatpak: "org.example.Notes"), provider: "gitlab") == .allowed)
    }

    @Test func theFileIsTheOwnersAloneAndAnotherInstanceSeesEachChange() throws {
        let agent = ProgramGrants(file: file)
        let window = ProgramGrants(file: file)
        try agent.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: [])
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(file.deletingLastPathComponent().path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(window.all.map(\.provider) == ["github"])
        try window.forget(Program(path: "/usr/bin/git"), provider: "github")
        #expect(agent.decision(for: caller(file: git), provider: "github") == .unknown, "revoked in the window: asked again")
    }

    @Test func aUseIsRecordedWithoutUndoingAnotherInstancesChange() throws {
        let agent = ProgramGrants(file: file)
        let window = ProgramGrants(file: file)
        try agent.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: [])
        try window.allow(Program(path: "/usr/bin/oidc-token"), file: nil, provider: "gitlab", scopes: [])
        agent.used(Program(path: "/usr/bin/git"), provider: "github", now: Date(timeIntervalSince1970: 1_800_000_000))
        let all = window.all
        #expect(Set(all.map(\.provider)) == ["github", "gitlab"])
        #expect(all.first { $0.provider == "github" }?.lastUsed == 1_800_000_000)
    }

    @Test func aDamagedFileIsSetAsideAndEveryProgramAskedAgain() throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{\"allowed\": [tru".utf8).write(to: file)
        chmod(file.deletingLastPathComponent().path, 0o700)
        let grants = ProgramGrants(file: file)
        #expect(grants.decision(for: caller(file: git), provider: "github") == .unknown)
        #expect(grants.problem?.contains("could not be read; it is kept aside when the list is next written") == true)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: [])
        #expect(grants.decision(for: caller(file: git), provider: "github") == .allowed, "and it works on")
        #expect(grants.problem?.contains("could not be read; it was set aside as \(file.path).damaged-") == true)
        let aside = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).filter {
            $0.contains(".damaged-")
        }
        #expect(aside.count == 1, "the damaged bytes are kept")
    }
}
