import AgentCore
import Foundation
import OAuthCore
import TestSupport
import Testing

/// Which connections a real process holds, told by the kernel (/proc and NETLINK_SOCK_DIAG).
@Suite struct SocketHoldersTests {
    @Test(arguments: [
        ("unix:path=/run/user/1000/bus", ["/run/user/1000/bus"]),
        ("unix:abstract=/tmp/dbus-AbC,guid=0123", ["@/tmp/dbus-AbC"]),
        ("unix:path=/tmp/a%20b,guid=1;unix:abstract=x", ["/tmp/a b", "@x"]),
        ("tcp:host=localhost,port=4", []),
    ])
    func theSessionBusIsFoundWhereAClientFindsIt(address: String, found: [String]) {
        #expect(SocketHolders.sessionBusAddresses(environment: ["DBUS_SESSION_BUS_ADDRESS": address]) == Set(found))
    }

    @Test func withoutAnAddressTheBusIsInTheRuntimeFolder() {
        #expect(SocketHolders.sessionBusAddresses(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]) == ["/run/user/7/bus"])
        #expect(SocketHolders.sessionBusAddresses(environment: [:]).isEmpty)
    }

    /// A process with listening sockets at a path and at an abstract name, connected to each: it holds
    /// a connection to both, to nothing elsewhere, and this test, which never connected, holds none.
    @Test func aProcessHoldsTheConnectionsItMade() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("holders-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("bus").path
        let abstract = "latchkey-test-\(UUID().uuidString)"
        let script = """
            import os, socket, sys, time
            server = socket.socket(socket.AF_UNIX); server.bind(sys.argv[1]); server.listen()
            hidden = socket.socket(socket.AF_UNIX); hidden.bind("\\0" + sys.argv[2]); hidden.listen()
            client = socket.socket(socket.AF_UNIX); client.connect(sys.argv[1])
            other = socket.socket(socket.AF_UNIX); other.connect("\\0" + sys.argv[2])
            # Accepted, as a bus accepts: a connection not yet accepted has no inode at its far end.
            accepted = [server.accept(), hidden.accept()]
            print(os.getpid(), flush=True)
            time.sleep(60)
            """
        let output = Pipe().closedOnExec()
        let holder = try Spawned("/usr/bin/python3", ["-c", script, path, abstract], output: output.fileHandleForWriting.fileDescriptor)
        defer { holder.kill() }
        try output.fileHandleForWriting.close()
        let line = await BlockingWork.run { output.firstLine(within: 60, while: holder) }?.trimmingCharacters(in: .whitespacesAndNewlines)
        let pid = try #require(line.flatMap { Int32($0) })
        #expect(SocketHolders.holdsConnection(pid: pid, to: [path]) == true)
        #expect(SocketHolders.holdsConnection(pid: pid, to: ["@" + abstract]) == true)
        #expect(SocketHolders.holdsConnection(pid: pid, to: [path + "-elsewhere"]) == false)
        #expect(SocketHolders.holdsConnection(pid: getpid(), to: [path]) == false, "this test never connected")
        #expect(SocketHolders.holdsConnection(pid: 999_999_999, to: [path]) == nil, "no such process: cannot be told")
    }

    /// A read of a caller that never returns (a FUSE file system that never answers, under a root of
    /// the caller's making) is given up on, and the next caller is still identified.
    @Test func anIdentificationThatHangsIsGivenUpOnAndCostsOnlyItsThread() async {
        let hang = DispatchSemaphore(value: 0)
        defer { hang.signal() }
        #expect(
            await Identification.run(for: "/hangs", within: 0.2) { () -> Int in
                hang.wait()
                return 1
            } == nil)
        #expect(await Identification.run(for: "/hangs") { 2 } == 2, "one given up on: its program's next caller is still read")
    }

    /// A program whose reads keep hanging is refused at once once it has a few overdue, so it cannot
    /// take every thread identification may have; the other programs' callers are read as ever.
    @Test func aProgramWhoseReadsHangCannotTakeEveryonesThreads() async {
        let hang = DispatchSemaphore(value: 0)
        defer { for _ in 0..<Identification.most { hang.signal() } }
        for _ in 0..<Identification.mostOverduePerProgram {
            #expect(
                await Identification.run(for: "/stuck", within: 0.2) { () -> Int in
                    hang.wait()
                    return 1
                } == nil)
        }
        #expect(await Identification.run(for: "/stuck") { 2 } == nil, "refused at once, not read")
        // Many more of its callers, all at once: none is given a thread…
        await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<Identification.most { group.addTask { await Identification.run(for: "/stuck") { 3 } } }
            for await answer in group { #expect(answer == nil) }
        }
        // …and another program's are read as ever.
        #expect(await Identification.run(for: "/usr/bin/git") { 4 } == 4)
    }

    /// What a caller is counted against (connection slots, overdue reads): its program; for Latchkey's
    /// own command, the program that ran it, so that one program's many `latchkey token`s do not
    /// crowd out everyone's; for a program that hides its file, the name it runs under.
    @Test func aCallerIsCountedAgainstTheProgramBehindIt() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        func process(_ pid: Int32, exe: String?, stat: String) throws {
            let folder = root.appendingPathComponent("\(pid)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            if let exe {
                try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("exe").path, withDestinationPath: exe)
            }
            try Data(stat.utf8).write(to: folder.appendingPathComponent("stat"))
        }
        try process(77, exe: "/usr/bin/git", stat: "77 (git) S 1 77 77 0")
        try process(500, exe: "/usr/bin/latchkey", stat: "500 (latchkey) S 77 500 500 0")
        try process(600, exe: nil, stat: "600 (oidc-token) S 1 600 600 0")
        try process(88, exe: "/usr/bin/dash", stat: "88 (sh) S 1 88 88 0")
        try process(501, exe: "/usr/bin/latchkey", stat: "501 (latchkey) S 88 501 501 0")
        let own = OwnExecutable(files: [], paths: ["/usr/bin/latchkey"])
        #expect(Identification.key(of: 77, own: own, proc: root.path) == "/usr/bin/git")
        #expect(Identification.key(of: 500, own: own, proc: root.path) == "/usr/bin/git", "latchkey token, run by git")
        #expect(Identification.key(of: 500, own: .none, proc: root.path) == "/usr/bin/latchkey")
        #expect(Identification.key(of: 600, own: own, proc: root.path) == "hidden: oidc-token")
        #expect(Identification.key(of: 501, own: own, proc: root.path) == "/usr/bin/dash, process 88", "a shell: that shell alone")
    }

    /// A burst of quick reads for one program (a build asking for many tokens at once) is not refused.
    @Test func manyQuickReadsForOneProgramAtOnceAreAllRead() async {
        let answers = await withTaskGroup(of: Int?.self) { group in
            for n in 0..<16 { group.addTask { await Identification.run(for: "/usr/bin/latchkey") { n } } }
            return await group.reduce(into: [Int]()) { if let n = $1 { $0.append(n) } }
        }
        #expect(answers.sorted() == Array(0..<16))
    }
}
