import FoundationEssentials
import Glibc
import InstallLayout
import OAuthCore

/// A process that asked the agent for something, as the kernel vouches for it
/// (the socket's peer credentials, or the bus's for a D-Bus caller) and as
/// `/proc` describes it: which program, with which command line.
///
/// A process id names a process only while it lives, and a process may exec
/// another program after it connected. So a caller is identified when it
/// connects, and again before a token is handed over (`isStillTheSame`): the
/// same start time and the same executable file, or no token. (Linux 6.5's
/// pidfd peer credentials would close the remaining gap; Debian 12 runs 6.1.)
public struct Caller: Sendable, Equatable {
    public let pid: Int32
    public let uid: UInt32
    public let program: Program
    /// The executable file itself, as it was when the caller was identified.
    public let file: ExecutableFile
    /// The command line, as the process set it (it may change its own): shown, never trusted.
    public let commandLine: [String]
    /// Latchkey's own command (`latchkey token`, `git-credential-latchkey`) asked on behalf of the
    /// program that ran it: that program is this caller, and this says through what.
    public let through: String?
    /// When the process started (clock ticks since boot): with the pid, which process this is.
    public let started: UInt64
    /// The process that connected, when it is Latchkey's own command asking for its parent.
    public let asker: ProcessKey?
    /// Its connection to the agent was not opened close-on-exec, so it may have been made by a program
    /// the process has replaced since (by exec): the program named may not be the one that asked. It
    /// is asked about each time, and nothing kept covers it.
    public var connectionKeptAcrossExec = false
    /// Where its executable runs from, when that is not the path it is named by: `/usr/lib/git-core/git`
    /// for `/usr/bin/git` (`CommandName`). Shown; the program is its name.
    public let runsFrom: String?
    /// For a program that hides which file it runs: the process that started it, as far as it can be
    /// told (its program, and its process id). Shown beside the name the program gives itself.
    public var startedBy: String?

    /// A process as the kernel tells one from another: its id and when it started.
    public struct ProcessKey: Sendable, Equatable, Hashable {
        public let pid: Int32
        public let started: UInt64
    }

    public init(
        pid: Int32, uid: UInt32, program: Program, file: ExecutableFile, commandLine: [String], through: String? = nil,
        started: UInt64 = 0, asker: ProcessKey? = nil, runsFrom: String? = nil
    ) {
        self.pid = pid
        self.uid = uid
        self.program = program
        self.file = file
        self.commandLine = commandLine
        self.through = through
        self.started = started
        self.asker = asker
        self.runsFrom = runsFrom.flatMap { $0.isEmpty || $0 == program.path ? nil : $0 }
    }

    /// This process, and the one that connected for it.
    public var key: ProcessKey { ProcessKey(pid: pid, started: started) }

    /// The process `pid` of user `uid`, read from `proc`. When its executable is Latchkey's own
    /// (`own`, or a file at Latchkey's own path: an upgrade replaced it), the program is its parent.
    /// A refusal, in a sentence, when it cannot be told for sure who asks.
    public static func identify(
        pid: Int32, uid: UInt32, own: OwnExecutable = .current, proc: String = "/proc",
        flatpakInstances: String? = FlatpakIdentity.instances
    ) -> Result<
        Caller, AgentRefusal
    > {
        let first: ProcessFiles
        switch ProcessFiles.of(pid: pid, proc: proc, instances: flatpakInstances) {
        case .success(let files): first = files
        case .failure(let refusal): return .failure(refusal)
        }
        guard own.matches(first) else {
            var caller = Caller(
                pid: pid, uid: uid, program: first.program, file: first.file, commandLine: first.commandLine,
                started: first.started, runsFrom: first.runsFrom)
            if first.program.hiddenName != nil {
                let parent = try? ProcessFiles.of(pid: first.parent, proc: proc, instances: flatpakInstances).get()
                caller.startedBy = "\(parent?.program.name ?? "a process that cannot be identified"), process \(first.parent)"
            }
            return .success(caller)
        }
        guard first.parent > 1, case .success(let parent) = ProcessFiles.of(pid: first.parent, proc: proc, instances: flatpakInstances)
        else {
            return .failure(AgentRefusal(.denied, "Latchkey's own command asked with no program behind it to ask for."))
        }
        let through = first.commandLine.prefix(2).map(lastComponent).joined(separator: " ")
        // An ssh that ran Latchkey's command here (a LocalCommand) is ssh asking for itself, not a forward.
        var program = parent.program
        program.remoteHost = nil
        return .success(
            Caller(
                pid: parent.pid, uid: uid, program: program, file: parent.file, commandLine: parent.commandLine,
                through: through, started: parent.started, asker: ProcessKey(pid: pid, started: first.started),
                runsFrom: parent.runsFrom))
    }

    /// Whether the process still runs the executable it was identified with (and, for Latchkey's own
    /// command, that command still runs for it): checked before a token is handed over.
    public func isStillTheSame(proc: String = "/proc", flatpakInstances: String? = FlatpakIdentity.instances) -> Bool {
        if let asker, ProcessFiles.startTime(of: asker.pid, proc: proc) != asker.started { return false }
        guard case .success(let now) = ProcessFiles.of(pid: pid, proc: proc, instances: flatpakInstances) else { return false }
        return now.started == started && now.file == file && now.program == program
    }

    /// `isStillTheSame`, read on a thread of its own and given up on (as not the same) after a while
    /// (`Identification`): /proc of a process stuck in the kernel can hold a reader up.
    public func stillTheSame() async -> Bool {
        await Identification.run(forProcess: pid) { isStillTheSame() } ?? false
    }

    /// A program that runs other programs for anyone (`Program.runsOthers`): asked about each time.
    /// git is one too, but for its credential helper: `git -c alias.t='!latchkey token …' t` runs
    /// anything with git as its parent, so what git is allowed covers git's helper calls only.
    public var runsOthers: Bool { program.runsOthers || isGitOutsideItsHelper }

    /// git, asking through another of Latchkey's commands than its credential helper
    /// (`git-credential-latchkey`): `latchkey token` run by whatever git ran.
    public var isGitOutsideItsHelper: Bool {
        guard program.flatpakID == nil, program.path.split(separator: "/").last == "git", let through else { return false }
        return !(through.hasPrefix("git-credential-latchkey") || through.hasPrefix("latchkey git-credential"))
    }

}

/// Latchkey's own executables (the app, the agent, and `latchkey`, its front): a caller running one
/// asks for the program that ran it.
public struct OwnExecutable: Sendable {
    public let files: [ExecutableFile]
    public let paths: [String]

    public init(files: [ExecutableFile], paths: [String]) {
        self.files = files
        self.paths = paths
    }

    /// This process's own executable, the app beside it (the agent's, in `<prefix>/lib/latchkey`
    /// installed), and the front beside it (a build) or in `<prefix>/bin` (installed).
    public static let current: OwnExecutable = {
        let layout = InstallLayout.current
        let others = [layout.beside("latchkey-app").path, layout.program("latchkey").path]
        let paths = [ProcessFiles.readLink("/proc/self/exe").map(ProcessFiles.undeleted)].compactMap { $0 } + others
        return OwnExecutable(files: (["/proc/self/exe"] + others).compactMap(ProcessFiles.executableFile), paths: paths)
    }()

    /// None: every caller is itself (tests of other programs).
    public static let none = OwnExecutable(files: [], paths: [])

    func matches(_ process: ProcessFiles) -> Bool {
        files.contains(process.file) || paths.contains(process.program.path)
    }
}

/// `/proc/PID` read for one process: its executable, command line, parent, start time and Flatpak id.
public struct ProcessFiles: Sendable {
    let pid: Int32
    let program: Program
    let file: ExecutableFile
    let commandLine: [String]
    let parent: Int32
    let started: UInt64
    /// The path its executable runs from, when the program is named otherwise (`CommandName`).
    let runsFrom: String

    /// The process, read between two looks at its start time (the same process throughout).
    /// Refused when anything that tells who it is cannot be read, and when it runs in a sandbox
    /// of another kind than Flatpak's (another mount namespace without `/.flatpak-info`).
    static func of(pid: Int32, proc: String, instances: String? = FlatpakIdentity.instances) -> Result<ProcessFiles, AgentRefusal> {
        let directory = "\(proc)/\(pid)"
        let unknown = AgentRefusal(.denied, "The program that asked could not be identified (it ended, or hides its particulars).")
        // Its start and its parent, from one read of its stat line.
        guard let fields = statFields(pid, proc), fields.count > 19, let started = UInt64(fields[19]), let parent = Int32(fields[1])
        else { return .failure(unknown) }
        guard var path = readLink("\(directory)/exe"), var file = executableFile("\(directory)/exe") else {
            // Hidden: which sandbox it is in cannot be read, but whether it is in another process
            // namespace (Flatpak's, a container's) can, and then it is not a program on the host.
            if inAnotherPIDNamespace(pid, proc) {
                return .failure(
                    AgentRefusal(
                        .denied,
                        "A program that hides which file it runs asked from a sandbox, so Latchkey cannot tell which program it is; "
                            + "it gets no token."))
            }
            return hidden(pid, proc, started: started, parent: parent, state: fields[0]).map(Result.success) ?? .failure(unknown)
        }
        path = undeleted(path)
        let runsFrom = path
        // In this mount namespace: no sandbox, and nothing under its root is opened (a root of the
        // caller's own making could hang whoever walks it). In another: Flatpak's, or refused.
        guard let theirs = readLink("\(directory)/ns/mnt"), let ours = readLink("\(proc)/self/ns/mnt") else { return .failure(unknown) }
        var flatpakID: String?
        if theirs != ours {
            switch FlatpakIdentity.of(pid: pid, proc: proc, instances: instances) {
            case .app(let id): flatpakID = id
            case .unreadable: return .failure(unknown)
            case .unverified(let claimed):
                let claim = claimed.map { " (it says it is the Flatpak app \($0), but no Flatpak sandbox of that app runs it)" } ?? ""
                return .failure(
                    AgentRefusal(
                        .denied,
                        "\(path) runs in a sandbox of its own\(claim), so Latchkey cannot tell which program it is; it gets no token."))
            case .none:
                return .failure(
                    AgentRefusal(
                        .denied,
                        "\(path) runs in a sandbox of its own that is not Flatpak's, so Latchkey cannot tell which program it is; it gets no token."
                    ))
            }
        }
        // A system program by the name a person knows it (outside a sandbox, whose paths are its own).
        if flatpakID == nil {
            path = CommandName.name(of: path, exe: "\(directory)/exe")
            // Named by another file of the very same bytes: that file is what a grant is tied to, so that
            // git through /usr/lib/git-core/git and /usr/bin/git are one program to "Always allow".
            if path != runsFrom, let named = executableFile(path) { file = named }
        }
        let commandLine = commandLine(pid, proc)
        guard startTime(of: pid, proc: proc) == started else { return .failure(unknown) }
        // ssh connects to the socket only for a forward (`ssh -R`): whatever asks is on the other machine.
        let remoteHost = flatpakID == nil && isSystemSSH(path: path, exe: "\(directory)/exe") ? SSHDestination.host(in: commandLine) : nil
        return .success(
            ProcessFiles(
                pid: pid, program: Program(path: path, flatpakID: flatpakID, remoteHost: remoteHost), file: file,
                commandLine: commandLine, parent: parent, started: started, runsFrom: runsFrom))
    }

    /// A live process whose executable cannot be read: it made itself non-dumpable (oidc-token,
    /// ssh-agent and gpg-agent do), so the kernel shows its `exe`, `root` and namespaces to nobody
    /// without CAP_SYS_PTRACE, not even its own user's other programs. Its stat line and command line
    /// stay readable: it is the name it runs under, and which file that is stays unknown. Nil when it
    /// is gone or a zombie (nobody to answer), or when its start time changed since (another process).
    static func hidden(_ pid: Int32, _ proc: String, started: UInt64, parent: Int32, state: Substring) -> ProcessFiles? {
        guard state != "Z", state != "X", let name = commandName(pid, proc), !name.isEmpty else { return nil }
        let commandLine = commandLine(pid, proc)
        guard startTime(of: pid, proc: proc) == started else { return nil }
        return ProcessFiles(
            pid: pid, program: .hidden(calling: name), file: .unknown, commandLine: commandLine, parent: parent, started: started,
            runsFrom: "")
    }

    /// Whether the process runs in a process namespace below the one `proc` shows (its status's
    /// `NSpid` names it by more than one pid), which a non-dumpable process cannot hide. Unreadable:
    /// not known to be, and its other checks decide.
    static func inAnotherPIDNamespace(_ pid: Int32, _ proc: String) -> Bool {
        guard let bytes = read("\(proc)/\(pid)/status") else { return false }
        let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("NSpid:") }
        return (line?.split(whereSeparator: { $0 == "\t" || $0 == " " }).count ?? 0) > 2
    }

    /// The name in the stat line's parentheses (`comm`: the executable's name, at most 15 bytes, unless
    /// the process renamed itself).
    static func commandName(_ pid: Int32, _ proc: String) -> String? {
        guard let bytes = read("\(proc)/\(pid)/stat") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")"), open < close else { return nil }
        return String(text[text.index(after: open)..<close])
    }

    /// The command line, as the process set it.
    static func commandLine(_ pid: Int32, _ proc: String) -> [String] {
        var commandLine = (read("\(proc)/\(pid)/cmdline") ?? []).split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if commandLine.last == "" { commandLine.removeLast() }
        return commandLine
    }

    /// Whether the process runs the system's ssh: named `ssh`, and a file of root's that nobody else
    /// may write (a package's). A program of the person's own named ssh (`~/.local/bin/ssh`) is only
    /// a program, identified by its path: what its command line says of a host is not taken.
    static func isSystemSSH(path: String, exe: String) -> Bool {
        guard lastComponent(path) == "ssh" else { return false }
        var info = stat()
        guard stat(exe, &info) == 0 else { return false }
        return info.st_uid == 0 && info.st_mode & (S_IWGRP | S_IWOTH) == 0
    }

    /// The path the kernel names, less the mark it adds once the file was replaced or removed.
    static func undeleted(_ path: String) -> String {
        path.hasSuffix(" (deleted)") ? String(path.dropLast(" (deleted)".count)) : path
    }

    /// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks since boot.
    static func startTime(of pid: Int32, proc: String) -> UInt64? {
        statFields(pid, proc).flatMap { $0.count > 19 ? UInt64($0[19]) : nil }
    }

    /// The fields after the command name, which may itself hold spaces and parentheses: from field 3 (state) on.
    static func statFields(_ pid: Int32, _ proc: String) -> [Substring]? {
        guard let bytes = read("\(proc)/\(pid)/stat") else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    static func executableFile(_ path: String) -> ExecutableFile? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return ExecutableFile(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9)
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(path, &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A small file of `/proc` (at most 64 KiB), or nil.
    static func read(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            bytes += chunk[0..<n]
        }
        return bytes
    }
}

/// The last component of a path (`latchkey` of `/usr/bin/latchkey`).
private func lastComponent(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }
