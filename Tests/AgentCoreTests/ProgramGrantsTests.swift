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
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .unknown)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: ["repo"])
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .allowed)
        #expect(grants.decision(for: caller(file: git), provider: "gitlab", person: "ada") == .unknown, "one provider at a time")
        #expect(
            grants.decision(for: caller("/usr/local/bin/git", file: git), provider: "github", person: "ada") == .unknown, "another path")
        try grants.forget(Program(path: "/usr/bin/git"), provider: "github")
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .unknown)
    }

    @Test func aProgramWhoseExecutableChangedIsAskedAgain() throws {
        let grants = ProgramGrants(file: file)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: [])
        var upgraded = git
        upgraded.inode = 43
        #expect(grants.decision(for: caller(file: upgraded), provider: "github", person: "ada") == .changed)
    }

    @Test func aFlatpakAppIsAllowedByItsAppIDAndNeverByAPath() throws {
        let grants = ProgramGrants(file: file)
        // latchkey agent allow --flatpak org.example.Notes github: no path, no file.
        try grants.allow(Program(path: "", flatpakID: "org.example.Notes"), file: nil, provider: "github", person: "ada", scopes: [])
        #expect(
            grants.decision(for: caller("/app/bin/notes", file: git, flatpak: "org.example.Notes"), provider: "github", person: "ada")
                == .allowed)
        #expect(
            grants.decision(for: caller("/app/bin/notes", file: git, flatpak: "org.example.Other"), provider: "github", person: "ada")
                == .unknown)
        // A host program allowed by path does not cover a Flatpak app whose path inside its sandbox is the same.
        try grants.allow(Program(path: "/usr/bin/python3"), file: nil, provider: "gitlab", person: "ada", scopes: [])
        #expect(
            grants.decision(for: caller("/usr/bin/python3", file: git, flatpak: "org.example.Notes"), provider: "gitlab", person: "ada")
                == .unknown)
        #expect(grants.decision(for: caller("/usr/bin/python3", file: git), provider: "gitlab", person: "ada") == .allowed)
        // Allowed in the dialog, a Flatpak app stays allowed through its updates.
        try grants.allow(
            Program(path: "/app/bin/notes", flatpakID: "org.example.Notes"), file: git, provider: "gitlab", person: "ada", scopes: [])
        var updated = git
        updated.inode += 1
        #expect(
            grants.decision(for: caller("/app/bin/notes", file: updated, flatpak: "org.example.Notes"), provider: "gitlab", person: "ada")
                == .allowed)
    }

    @Test func theFileIsTheOwnersAloneAndAnotherInstanceSeesEachChange() throws {
        let agent = ProgramGrants(file: file)
        let window = ProgramGrants(file: file)
        try agent.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: [])
        var info = stat()
        #expect(stat(file.path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(stat(file.deletingLastPathComponent().path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        #expect(window.all.map(\.provider) == ["github"])
        try window.forget(Program(path: "/usr/bin/git"), provider: "github")
        #expect(agent.decision(for: caller(file: git), provider: "github", person: "ada") == .unknown, "revoked in the window: asked again")
    }

    @Test func aUseIsRecordedWithoutUndoingAnotherInstancesChange() throws {
        let agent = ProgramGrants(file: file)
        let window = ProgramGrants(file: file)
        try agent.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: [])
        try window.allow(Program(path: "/usr/bin/oidc-token"), file: nil, provider: "gitlab", person: "ada", scopes: [])
        agent.used(Program(path: "/usr/bin/git"), provider: "github", now: Date(timeIntervalSince1970: 1_800_000_000))
        let all = window.all
        #expect(Set(all.map(\.provider)) == ["github", "gitlab"])
        #expect(all.first { $0.provider == "github" }?.lastUsed == 1_800_000_000)
    }

    /// An account's key is the next person's once one signs out: a grant covers the person it was made
    /// for, one that names nobody (an earlier release's) covers nobody, and signing out forgets them all.
    @Test func aGrantIsThePersonsAndGoesWithTheirSignOut() throws {
        let grants = ProgramGrants(file: file)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: [])
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .allowed)
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "grace") == .unknown, "another person, same key")
        #expect(grants.decision(for: caller(file: git), provider: "github", person: nil) == .unknown, "nobody known")
        try grants.forgetAccount("github")
        #expect(grants.all.isEmpty)

        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"allowed":[{"program":{"path":"/usr/bin/git"},"provider":"github","scopes":[],"allowed_at":1}]}"#.utf8).write(to: file)
        #expect(grants.all.count == 1 && grants.all.first?.person == nil, "an earlier release's grant reads")
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .unknown, "and is asked again")
        #expect(grants.decision(for: caller(file: git), provider: "github", person: nil) == .unknown)
    }

    /// git allowed always is allowed for its credential helper's calls only: through `latchkey token`
    /// (an alias of git's can run anything with git as its parent) it is asked about each time.
    @Test func gitIsAllowedThroughItsHelperOnly() throws {
        let grants = ProgramGrants(file: file)
        let file = git
        try grants.allow(Program(path: "/usr/bin/git"), file: file, provider: "github", person: "ada", scopes: [])
        func asking(through: String?) -> Caller {
            Caller(pid: 1, uid: getuid(), program: Program(path: "/usr/bin/git"), file: file, commandLine: ["git"], through: through)
        }
        #expect(grants.decision(for: asking(through: "git-credential-latchkey get"), provider: "github", person: "ada") == .allowed)
        #expect(grants.decision(for: asking(through: "latchkey git-credential"), provider: "github", person: "ada") == .allowed)
        #expect(grants.decision(for: asking(through: "latchkey token"), provider: "github", person: "ada") == .unknown)
        #expect(asking(through: "latchkey token").runsOthers && !asking(through: "git-credential-latchkey get").runsOthers)
    }

    @Test func aDamagedFileIsSetAsideAndEveryProgramAskedAgain() throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("{\"allowed\": [tru".utf8).write(to: file)
        chmod(file.deletingLastPathComponent().path, 0o700)
        let grants = ProgramGrants(file: file)
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .unknown)
        #expect(grants.problem?.contains("could not be read; it is kept aside when the list is next written") == true)
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", person: "ada", scopes: [])
        #expect(grants.decision(for: caller(file: git), provider: "github", person: "ada") == .allowed, "and it works on")
        #expect(grants.problem?.contains("could not be read; it was set aside as \(file.path).damaged-") == true)
        let aside = try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path).filter {
            $0.contains(".damaged-")
        }
        #expect(aside.count == 1, "the damaged bytes are kept")
    }
}
