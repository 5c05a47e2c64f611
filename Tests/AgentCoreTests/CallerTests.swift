import AgentCore
import Foundation
import TestSupport
import Testing

/// Who a caller is, read from the real /proc of real processes.
@Suite struct CallerTests {
    /// A real process, once the kernel has finished making it: posix_spawn returns as soon as the
    /// child calls exec, a moment before its command line is in place.
    func spawnSleep() throws -> Spawned {
        let sleep = try Spawned("/bin/sleep", ["30"])
        let deadline = Date().addingTimeInterval(10)
        while (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(sleep.processIdentifier)/cmdline")))?.isEmpty != false, Date() < deadline
        {
            usleep(1000)
        }
        return sleep
    }

    func stamp(_ path: String) -> (UInt64, UInt64) {
        var info = stat()
        stat(path, &info)
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    @Test func aProgramIsItsExecutableAndItsCommandLine() throws {
        let sleep = try spawnSleep()
        defer { sleep.kill() }
        let caller = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: nil))
        let real = URL(fileURLWithPath: "/bin/sleep").resolvingSymlinksInPath().path
        #expect(caller.program == Program(path: real))
        #expect(caller.commandLine == ["/bin/sleep", "30"])
        let (device, inode) = stamp(real)
        #expect(caller.file?.device == device && caller.file?.inode == inode)
        #expect(caller.through == nil)
    }

    @Test func latchkeysOwnCommandAsksForTheProgramThatRanIt() throws {
        let sleep = try spawnSleep()
        defer { sleep.kill() }
        // Were sleep Latchkey's own executable, the caller is the program that started it: this test.
        let own = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: nil)?.file)
        let caller = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: own))
        #expect(caller.pid == getpid())
        #expect(caller.program.path == URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path)
        #expect(caller.through == "sleep 30", "\(caller)")
    }

    @Test func aProcessThatIsGoneIsNobody() throws {
        let sleep = try spawnSleep()
        let pid = sleep.processIdentifier
        sleep.kill()
        #expect(Caller.of(pid: pid, uid: getuid(), own: nil) == nil)
    }

    @Test func aFlatpakAppIsItsAppID() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flatpak-\(UUID().uuidString)")
        let proc = root.appendingPathComponent("proc/4242")
        try FileManager.default.createDirectory(at: proc.appendingPathComponent("root"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("[Application]\nname=org.example.Notes\nruntime=runtime/org.gnome.Platform/x86_64/46\n\n[Instance]\ninstance-id=1\n".utf8)
            .write(to: proc.appendingPathComponent("root/.flatpak-info"))
        try Data("4242 (notes) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0".utf8).write(
            to: proc.appendingPathComponent("stat"))
        try Data("notes\0--sync\0".utf8).write(to: proc.appendingPathComponent("cmdline"))
        try FileManager.default.createSymbolicLink(atPath: proc.appendingPathComponent("exe").path, withDestinationPath: "/bin/sh")
        let caller = try #require(Caller.of(pid: 4242, uid: getuid(), own: nil, proc: root.appendingPathComponent("proc").path))
        #expect(caller.program == Program(path: "/bin/sh", flatpakID: "org.example.Notes"))
        #expect(caller.program.name == "org.example.Notes")
        #expect(caller.commandLine == ["notes", "--sync"])
    }
}
