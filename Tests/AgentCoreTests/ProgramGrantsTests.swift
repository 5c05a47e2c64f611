import AgentCore
import Foundation
import Testing

@Suite struct ProgramGrantsTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grants-\(UUID().uuidString)")
    var file: URL { directory.appendingPathComponent("config/allowed-programs") }
    let git = ExecutableFile(device: 1, inode: 42, size: 4096, modified: 1_700_000_000)

    func caller(_ path: String = "/usr/bin/git", file: ExecutableFile?) -> Caller {
        Caller(pid: 1, uid: getuid(), program: Program(path: path), file: file, commandLine: [path])
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
        #expect(
            grants.decision(for: caller(file: nil), provider: "github") == .changed, "a file that could not be read is not the one allowed")
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
        #expect(grants.problem?.contains("could not be read; it was set aside as") == true)
        #expect(FileManager.default.fileExists(atPath: file.path + ".damaged"))
        try grants.allow(Program(path: "/usr/bin/git"), file: git, provider: "github", scopes: [])
        #expect(grants.decision(for: caller(file: git), provider: "github") == .allowed, "and it works on")
    }
}
