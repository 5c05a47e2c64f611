import AgentCore
import Foundation
import TestSupport
import Testing

/// Who a caller is, read from the real /proc of real processes.
@Suite struct CallerTests {
    /// A real process, once the kernel has finished making it: posix_spawn returns as soon as the
    /// child calls exec, a moment before its command line is in place.
    func spawnSleep() async throws -> Spawned {
        let sleep = try Spawned("/bin/sleep", ["30"])
        try await waitUntil { (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(sleep.processIdentifier)/cmdline")))?.isEmpty == false }
        return sleep
    }

    func stamp(_ path: String) -> (UInt64, UInt64) {
        var info = stat()
        stat(path, &info)
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    @Test func aProgramIsItsExecutableAndItsCommandLine() async throws {
        let sleep = try await spawnSleep()
        defer { sleep.kill() }
        let caller = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: .none))
        let real = URL(fileURLWithPath: "/bin/sleep").resolvingSymlinksInPath().path
        #expect(caller.program == Program(path: real))
        #expect(caller.commandLine == ["/bin/sleep", "30"])
        let (device, inode) = stamp(real)
        #expect(caller.file.device == device && caller.file.inode == inode)
        #expect(caller.through == nil && caller.asker == nil)
        #expect(caller.isStillTheSame())
    }

    @Test func latchkeysOwnCommandAsksForTheProgramThatRanIt() async throws {
        let sleep = try await spawnSleep()
        defer { sleep.kill() }
        // Were sleep Latchkey's own executable, the caller is the program that started it: this test.
        let file = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: .none)?.file)
        let caller = try #require(Caller.of(pid: sleep.processIdentifier, uid: getuid(), own: OwnExecutable(files: [file], paths: [])))
        #expect(caller.pid == getpid())
        #expect(caller.program.path == URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path)
        #expect(caller.through == "sleep 30", "\(caller)")
        #expect(caller.asker?.pid == sleep.processIdentifier)
        #expect(caller.isStillTheSame())
        await sleep.end()
        #expect(!caller.isStillTheSame(), "the command that asked is gone: no token for it")
    }

    @Test func aProcessThatIsGoneIsNobody() async throws {
        let sleep = try await spawnSleep()
        let pid = sleep.processIdentifier
        await sleep.end()
        #expect(Caller.of(pid: pid, uid: getuid(), own: .none) == nil)
    }

    /// A fake /proc holding what the kernel shows of a Flatpak app: its root's `/.flatpak-info`, its stat
    /// and command line, its executable and namespaces (links whose text is all that is compared); and
    /// the instance Flatpak keeps for it in the runtime folder, with bwrap's `child-pid`.
    struct FlatpakTree {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("flatpak-\(UUID().uuidString)")
        var proc: String { root.appendingPathComponent("proc").path }
        var instances: String { root.appendingPathComponent("instances").path }

        init(
            info: String = Self.info, kept: String? = Self.info, childPID: Int32 = 4243,
            namespaces: (String, String) = ("user:[9]", "mnt:[8]")
        )
            throws
        {
            let process = root.appendingPathComponent("proc/4242")
            try FileManager.default.createDirectory(at: process.appendingPathComponent("root"), withIntermediateDirectories: true)
            try Data(info.utf8).write(to: process.appendingPathComponent("root/.flatpak-info"))
            try Data("4242 (notes) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0".utf8).write(
                to: process.appendingPathComponent("stat"))
            try Data("notes\0--sync\0".utf8).write(to: process.appendingPathComponent("cmdline"))
            try FileManager.default.createSymbolicLink(atPath: process.appendingPathComponent("exe").path, withDestinationPath: "/bin/sh")
            // The agent's own namespaces ("self") are the host's: the app's are another's.
            for (pid, (user, mount)) in [("4242", namespaces), ("4243", ("user:[9]", "mnt:[8]")), ("self", ("user:[1]", "mnt:[1]"))] {
                let ns = root.appendingPathComponent("proc/\(pid)/ns")
                try FileManager.default.createDirectory(at: ns, withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: ns.appendingPathComponent("user").path, withDestinationPath: user)
                try FileManager.default.createSymbolicLink(atPath: ns.appendingPathComponent("mnt").path, withDestinationPath: mount)
            }
            let instance = root.appendingPathComponent("instances/1")
            try FileManager.default.createDirectory(at: instance, withIntermediateDirectories: true)
            if let kept { try Data(kept.utf8).write(to: instance.appendingPathComponent("info")) }
            try Data(#"{"child-pid": \#(childPID), "mnt-namespace": 8}"#.utf8).write(to: instance.appendingPathComponent("bwrapinfo.json"))
        }

        static let info =
            "[Application]\nname=org.example.Notes\nruntime=runtime/org.gnome.Platform/x86_64/46\n\n[Instance]\ninstance-id=1\n"

        func identify() -> Result<Caller, AgentRefusal> {
            Caller.identify(pid: 4242, uid: getuid(), own: .none, proc: proc, flatpakInstances: instances)
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    @Test func aFlatpakAppIsItsAppID() throws {
        let tree = try FlatpakTree()
        defer { tree.remove() }
        let caller = try tree.identify().get()
        #expect(caller.program == Program(path: "/bin/sh", flatpakID: "org.example.Notes"))
        #expect(caller.program.name == "org.example.Notes")
        #expect(caller.commandLine == ["notes", "--sync"])
        #expect(!caller.runsOthers, "a Flatpak app is its app id, whatever runs inside")
    }

    /// A `/.flatpak-info` that no running Flatpak instance stands behind is not taken: none named, one
    /// whose kept info names another app, one whose sandboxed process is in other namespaces, no
    /// instance at all. Each is refused as a sandbox of its own, naming what it claimed.
    @Test(arguments: [
        ("no instance", "[Application]\nname=org.example.Notes\n", FlatpakTree.info, ("user:[9]", "mnt:[8]")),
        ("another app kept", FlatpakTree.info, "[Application]\nname=org.example.Other\n", ("user:[9]", "mnt:[8]")),
        ("other namespaces", FlatpakTree.info, FlatpakTree.info, ("user:[5]", "mnt:[8]")),
        (
            "an instance id that is a path", "[Application]\nname=org.example.Notes\n[Instance]\ninstance-id=../1\n", FlatpakTree.info,
            ("user:[9]", "mnt:[8]")
        ),
    ])
    func aFlatpakInfoNoInstanceStandsBehindIsNotTaken(what: String, info: String, kept: String, namespaces: (String, String)) throws {
        let tree = try FlatpakTree(info: info, kept: kept, namespaces: namespaces)
        defer { tree.remove() }
        guard case .failure(let refusal) = tree.identify() else { return #expect(Bool(false), "\(what): taken for a Flatpak app") }
        #expect(
            refusal.sentence.contains("it says it is the Flatpak app org.example.Notes, but no Flatpak sandbox of that app runs it"),
            "\(what)")
    }

    /// What sits at `/.flatpak-info` is opened so that it cannot hold the agent up or lead it elsewhere:
    /// a FIFO (which a plain open waits on for a writer, for good) and a symbolic link are refused at once.
    @Test(.timeLimit(.minutes(1)))
    func aFIFOOrALinkAtTheFlatpakInfoIsRefusedAtOnce() throws {
        for kind in ["fifo", "link"] {
            let tree = try FlatpakTree()
            defer { tree.remove() }
            let info = "\(tree.proc)/4242/root/.flatpak-info"
            try FileManager.default.removeItem(atPath: info)
            if kind == "fifo" {
                #expect(mkfifo(info, 0o600) == 0)
            } else {
                try FileManager.default.createSymbolicLink(atPath: info, withDestinationPath: "\(tree.instances)/1/info")
            }
            guard case .failure(let refusal) = tree.identify() else { return #expect(Bool(false), "\(kind): identified") }
            #expect(refusal.sentence.contains("could not be identified"), "\(kind): \(refusal.sentence)")
        }
    }

    /// The attack itself, with real processes: a user namespace of its own, a chroot into a folder of its
    /// own, and a `/.flatpak-info` it wrote naming an app. Not taken for that app.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
                && FileManager.default.isExecutableFile(atPath: "/usr/sbin/chroot"),
            "util-linux, coreutils"))
    func aHomemadeSandboxDoesNotPassForAFlatpakApp() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("homemade-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let script = """
            cd "$1" && for d in usr lib lib64 bin; do [ -e /$d ] || continue; mkdir -p $d; mount --rbind /$d $d || exit 1; done
            printf '[Application]\\nname=org.example.Notes\\n\\n[Instance]\\ninstance-id=1\\n' > .flatpak-info
            exec /usr/sbin/chroot "$1" /usr/bin/sleep 60
            """
        let homemade = try Spawned(
            "/usr/bin/unshare", ["--user", "--map-root-user", "--mount", "/bin/sh", "-c", script, "sh", folder.path])
        defer { homemade.kill() }
        let pid = homemade.processIdentifier
        try await waitUntil {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe"))?.hasSuffix("/sleep") == true
        }
        guard case .failure(let refusal) = Caller.identify(pid: pid, uid: getuid(), own: .none) else {
            return #expect(Bool(false), "taken for a Flatpak app")
        }
        #expect(Identification.key(of: pid).hasPrefix("mnt:["), "counted apart from the host's programs of that path")
        // Refused with what it claimed. (chroot by its whole path: /usr/sbin is not on an ordinary user's
        // PATH, and the sandbox never started there — which passed, once, for a refusal.)
        #expect(
            refusal.sentence.contains("it says it is the Flatpak app org.example.Notes"),
            "\(refusal.sentence)")
    }

    /// git runs its helpers from `/usr/lib/git-core/git`, a file of its own with `/usr/bin/git`'s very
    /// bytes (Debian's package): it is named `/usr/bin/git`, as the person knows it, with where it runs
    /// from beside. A file of other bytes under that name, or one anybody may write, keeps its own path.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/lib/git-core/git"), "git"))
    func gitIsNamedAsThePersonKnowsIt() async throws {
        func named(_ executable: String) async throws -> Caller {
            let git = try Spawned(executable, ["-c", "alias.wait=!sleep 30", "wait"])
            defer { git.kill() }
            try await waitUntil {
                (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(git.processIdentifier)/cmdline")))?.isEmpty == false
            }
            return try #require(Caller.of(pid: git.processIdentifier, uid: getuid(), own: .none))
        }
        let helperGit = try await named("/usr/lib/git-core/git")
        #expect(helperGit.program == Program(path: "/usr/bin/git") && helperGit.runsFrom == "/usr/lib/git-core/git")
        #expect(helperGit.file == (try await named("/usr/bin/git")).file, "tied to /usr/bin/git's file: one program to a grant")
        #expect(Program(path: "/usr/bin/git").covers(helperGit.program), "latchkey agent allow /usr/bin/git covers it")
        let plain = try await named("/usr/bin/git")
        #expect(plain.program == Program(path: "/usr/bin/git") && plain.runsFrom == nil)

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("git-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let writable = folder.appendingPathComponent("git").path
        try copyExecutable("/usr/bin/git", to: writable, mode: 0o777)
        #expect(try await named(writable).program == Program(path: writable), "anybody may write it: only itself")

        // Root's, writable by nobody else, the same bytes, but on another file system (one a FUSE server
        // could be, answering with git's bytes when read and others when run): only itself. Only root
        // can make such a copy, so only root's run can see this fail.
        if getuid() == 0 {
            let elsewhere = "/dev/shm/git-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: elsewhere) }
            let copy = elsewhere + "/git"
            try copyExecutable("/usr/bin/git", to: copy)
            #expect(try await named(copy).program == Program(path: copy), "another file system: only itself")
        }
    }

    /// A process that made itself non-dumpable (oidc-token does) shows the person's other programs its
    /// stat line and command line, but not its `exe`, `root` or namespaces: a fake /proc holds just
    /// those. It is the name it gives itself, with no file, and nothing kept covers it.
    @Test func aProgramThatHidesItsFileIsOnlyTheNameItGivesItself() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hidden-\(UUID().uuidString)")
        let proc = root.appendingPathComponent("proc/4343")
        try FileManager.default.createDirectory(at: proc, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("4343 (oidc-token) S 77 4343 4343 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 888 0 0".utf8).write(
            to: proc.appendingPathComponent("stat"))
        try Data("oidc-token\0mine\0".utf8).write(to: proc.appendingPathComponent("cmdline"))
        let caller = try #require(Caller.of(pid: 4343, uid: getuid(), own: .none, proc: root.appendingPathComponent("proc").path))
        #expect(caller.program == .hidden(calling: "oidc-token"))
        #expect(caller.program.path.isEmpty && caller.file == .unknown)
        #expect(caller.program.name == "a program that hides which file it runs, named \u{201C}oidc-token\u{201D}")
        #expect(caller.commandLine == ["oidc-token", "mine"] && caller.started == 888)
        #expect(caller.startedBy == "a process that cannot be identified, process 77", "its parent is not in this /proc")
        #expect(caller.isStillTheSame(proc: root.appendingPathComponent("proc").path))
        #expect(!caller.program.covers(caller.program), "its name is its own say: no grant covers it")
        #expect(!Program(path: "/usr/bin/oidc-token").covers(caller.program), "not even one of the program it names")
        #expect(!Program.hidden(calling: "oidc-token").covers(Program(path: "/usr/bin/oidc-token")), "nor the other way")
        let question = ConsentQuestion(
            caller: caller, providerID: "p", providerName: "P", scopes: [], applicationHint: nil, changed: false)
        #expect(!question.offersAlways && !question.offersWhileConnected, "allowed once at most")
        let sentence = ConsentSentence.nobodyToAsk(caller, asked: AgentRequest(target: .provider("p")))
        #expect(sentence.hasPrefix("A program that hides which file it runs"))
        #expect(!sentence.contains("latchkey agent allow"), "nothing to allow it by")

        // Its parent, as far as it can be told: here, one that hides its file too.
        let parent = root.appendingPathComponent("proc/77")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        try Data("77 (bash) S 1 77 77 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 500 0 0".utf8).write(to: parent.appendingPathComponent("stat"))
        let started = try #require(Caller.of(pid: 4343, uid: getuid(), own: .none, proc: root.appendingPathComponent("proc").path))
        #expect(started.startedBy == "a program that hides which file it runs, named \u{201C}bash\u{201D}, process 77")

        // In a process namespace of its own (a sandbox's: Flatpak's, a container's), which one cannot be
        // told from here: refused, not asked about as a program on the host.
        try Data("Name:\toidc-token\nNSpid:\t4343\t2\n".utf8).write(to: proc.appendingPathComponent("status"))
        let sandboxed = Caller.identify(pid: 4343, uid: getuid(), own: .none, proc: root.appendingPathComponent("proc").path)
        guard case .failure(let refusal) = sandboxed else { return #expect(Bool(false), "a hidden program in a sandbox was taken") }
        #expect(refusal.sentence.contains("from a sandbox"), "\(refusal.sentence)")
        try Data("Name:\toidc-token\nNSpid:\t4343\n".utf8).write(to: proc.appendingPathComponent("status"))
        #expect(Caller.of(pid: 4343, uid: getuid(), own: .none, proc: root.appendingPathComponent("proc").path) != nil, "on the host")

        // Gone, or a zombie: nobody.
        try Data("4343 (oidc-token) Z 77 4343 4343 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 888 0 0".utf8).write(
            to: proc.appendingPathComponent("stat"))
        #expect(Caller.of(pid: 4343, uid: getuid(), own: .none, proc: root.appendingPathComponent("proc").path) == nil)
        #expect(!caller.isStillTheSame(proc: root.appendingPathComponent("proc").path))
    }

    /// A program in a mount namespace of its own that is not Flatpak's (a container, `unshare`):
    /// which program it is cannot be told from here, so it gets no token.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs root to unshare"))
    func aProgramInAnotherSandboxIsRefusedAsRoot() async throws {
        let contained = try Spawned("/usr/bin/unshare", ["--mount", "/bin/sleep", "30"])
        defer { contained.kill() }
        var result = Caller.identify(pid: contained.processIdentifier, uid: getuid(), own: .none)
        // unshare execs sleep once its namespace is made.
        try await waitUntil {
            result = Caller.identify(pid: contained.processIdentifier, uid: getuid(), own: .none)
            return (try? result.get()) == nil
        }
        guard case .failure(let refusal) = result else { return #expect(Bool(false), "identified: \(result)") }
        #expect(refusal.sentence.contains("runs in a sandbox of its own that is not Flatpak's"))
    }

    @Test func shellsAndInterpretersRunOthers() throws {
        let file = ExecutableFile(device: 1, inode: 1, size: 1, modified: 1)
        // As the kernel names them: the real files behind Debian's alternatives and versioned names.
        let running = [
            "/bin/bash", "/usr/bin/python3.11", "/usr/bin/env", "/usr/lib/systemd/systemd", "/usr/bin/latchkey", "/usr/bin/tclsh8.6",
            "/usr/bin/wish8.6", "/usr/bin/mawk", "/usr/bin/gawk", "/usr/bin/gdb", "/usr/bin/strace", "/usr/bin/vim.basic",
            "/usr/bin/find", "/usr/bin/time", "/usr/bin/flock", "/usr/bin/watch", "/usr/bin/unshare", "/usr/bin/setpriv",
            "/usr/bin/systemd-run", "/usr/bin/dbus-run-session", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "/usr/bin/perl5.36.0",
            "/usr/bin/lua5.4", "/usr/sbin/chroot",
        ]
        for path in running {
            #expect(Caller(pid: 1, uid: 0, program: Program(path: path), file: file, commandLine: []).runsOthers, "\(path)")
        }
        for path in ["/usr/bin/oidc-token", "/usr/bin/git", "/usr/bin/kubectl", "/usr/bin/gh", "/usr/bin/glab", "/usr/bin/curl"] {
            #expect(!Caller(pid: 1, uid: 0, program: Program(path: path), file: file, commandLine: []).runsOthers, "\(path)")
        }
    }

    /// Issue 28: ssh connects to the agent's socket only for a forward (ssh -R), so the caller is
    /// whatever runs on the machine its command line names.
    @Test(arguments: [
        (["ssh", "devbox"], "devbox"),
        (["ssh", "-F", "/home/ada/.ssh/config", "devbox", "latchkey", "token"], "devbox"),
        (["/usr/bin/ssh", "-4AvR", "/tmp/a.sock:/run/user/1000/latchkey/agent.sock", "ada@build.example.org"], "build.example.org"),
        (["ssh", "-p2222", "-oStrictHostKeyChecking=yes", "-i", "key", "ada@10.0.0.7", "uptime"], "10.0.0.7"),
        (["ssh", "-N", "-R", "/tmp/a:/tmp/b", "--", "devbox"], "devbox"),
        (["ssh", "ssh://ada@devbox.example:2222/ignored"], "devbox.example"),
        (["ssh", "-R", "/tmp/a:/tmp/b"], "an unnamed host"),
        (["ssh", "evil\u{1B}[31mhost"], "an unnamed host"),
    ])
    func theHostAnSSHCommandLineReaches(commandLine: [String], host: String) {
        #expect(SSHDestination.host(in: commandLine) == host)
    }

    /// A forward runs whatever is on the far side, so nothing kept covers it: not a grant of ssh's
    /// path, not one that names the host (only a grants file edited by hand could hold one).
    @Test func noKeptGrantCoversAForward() {
        let devbox = Program(path: "/usr/bin/ssh", remoteHost: "devbox")
        #expect(devbox.name == "a program on devbox (through ssh)")
        let file = ExecutableFile(device: 1, inode: 2, size: 3, modified: 4)
        let forwarded = Caller(pid: 1, uid: 0, program: devbox, file: file, commandLine: ["ssh", "devbox"])
        #expect(forwarded.runsOthers, "it runs whatever is on devbox")
        #expect(Caller(pid: 1, uid: 0, program: Program(path: "/usr/bin/ssh"), file: file, commandLine: ["ssh"]).runsOthers)
        #expect(!devbox.covers(Program(path: "/usr/bin/ssh", remoteHost: "devbox")), "not even its own host, by name")
        #expect(!devbox.covers(Program(path: "/usr/bin/ssh", remoteHost: "prod")))
        #expect(!devbox.covers(Program(path: "/usr/bin/ssh")), "not ssh run here for itself")
        #expect(!Program(path: "/usr/bin/ssh").covers(Program(path: "/usr/bin/ssh", remoteHost: "devbox")), "nor the other way")
        let earlier = try? JSONDecoder().decode(Program.self, from: Data(#"{"path":"/usr/bin/oidc-token"}"#.utf8))
        #expect(earlier == Program(path: "/usr/bin/oidc-token"), "grants written before remote hosts read as they were")
    }

    /// Only the system's ssh (root's file, writable by nobody else) is taken for a forward: a program
    /// of the person's own named ssh is the program it is, whatever its command line says.
    @Test(.enabled(if: getuid() == 0, "needs root to give the file away"))
    func onlyTheSystemsSSHIsTakenForAForwardAsRoot() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ssh-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let ssh = directory.appendingPathComponent("ssh").path
        try copyExecutable("/bin/dash", to: ssh)
        // `ssh -c "sleep 30; true" devbox` to ssh's reading: a cipher, then the destination; to dash: a command it stays for.
        func caller() async throws -> Caller {
            let process = try Spawned(ssh, ["-c", "sleep 30; true", "devbox"])
            defer { process.kill() }
            // Identified once it runs the copy, its command line in place (right after its exec, neither need be).
            try await waitUntil {
                let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(process.processIdentifier)/exe")
                let commandLine = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/cmdline"))
                return exe == ssh && commandLine?.isEmpty == false
            }
            return try #require(Caller.of(pid: process.processIdentifier, uid: getuid(), own: .none))
        }
        chmod(ssh, 0o755)
        let system = try await caller()
        #expect(system.program.remoteHost == "devbox", "\(system.program) \(system.commandLine)")
        chmod(ssh, 0o775)
        #expect(try await caller().program.remoteHost == nil, "writable by its group")
        chmod(ssh, 0o755)
        chown(ssh, 65534, 65534)
        let own = try await caller()
        #expect(own.program.remoteHost == nil && own.program.name == ssh, "someone's own file")
        #expect(own.runsOthers, "and, named ssh, asked about each time")
    }
}
