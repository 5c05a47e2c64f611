import FoundationEssentials

/// A program as the person allows it: its executable's path, or, for a Flatpak
/// app, its app id. What the person allowed is also tied to the executable file
/// itself (`ExecutableFile`): a program whose file changed since is asked again.
public struct Program: Sendable, Hashable, Codable {
    /// The executable as the kernel names it (`/proc/PID/exe`).
    public var path: String
    /// The Flatpak app id, from the sandbox's `/.flatpak-info`; nil outside Flatpak.
    public var flatpakID: String?
    /// For ssh, which forwards the socket to another machine (`ssh -R`): that machine, as its command
    /// line names it (`devbox`, an alias of `~/.ssh/config`, or an address). Whatever runs there
    /// asks through it, so the host is who asks.
    public var remoteHost: String?
    /// For a process that hides its executable from the person's other programs (it made itself
    /// non-dumpable, as oidc-token and ssh-agent do against memory dumps): the name it runs under
    /// (its `comm`), which it chose itself. Its path is then empty: nobody can say which file it runs,
    /// nor whether it runs in a sandbox, so nothing kept covers it and it is allowed once at most.
    public var hiddenName: String?

    public init(path: String, flatpakID: String? = nil, remoteHost: String? = nil, hiddenName: String? = nil) {
        self.path = path
        self.flatpakID = flatpakID
        self.remoteHost = remoteHost
        self.hiddenName = hiddenName
    }

    /// A program that hides which file it runs, under the name it gives itself.
    public static func hidden(calling itself: String) -> Program { Program(path: "", hiddenName: itself) }

    /// How the person sees it: a program on the remote host, the Flatpak id, a hidden program by the
    /// name it gives itself, else the path.
    public var name: String {
        if let hiddenName { return "a program that hides which file it runs, named \u{201C}\(hiddenName)\u{201D}" }
        return remoteHost.map { "a program on \($0) (through ssh)" } ?? flatpakID ?? path
    }

    /// Whether what the person allowed as this program takes in `caller`: a Flatpak app by its app id
    /// alone (its path is inside its sandbox, and changes with its updates), anything else by its path,
    /// and never the one for the other. Nothing kept covers another machine reached through ssh (its
    /// host is only what a command line says; it is allowed once, or while connected), nor a program
    /// that hides which file it runs (its name is its own say).
    public func covers(_ caller: Program) -> Bool {
        guard remoteHost == nil, caller.remoteHost == nil, hiddenName == nil, caller.hiddenName == nil else { return false }
        if let flatpakID { return caller.flatpakID == flatpakID }
        return caller.flatpakID == nil && caller.path == path
    }

    /// A program that runs other programs for anyone (a shell, an interpreter, a launcher, the
    /// session's init, Latchkey itself): always allowing it would allow whatever runs through it, so
    /// the person is asked each time, and `latchkey agent allow` wants to be told so.
    public var runsOthers: Bool {
        if flatpakID != nil { return false }
        let name = Self.baseName(path.split(separator: "/").last.map(String.init) ?? path)
        if Self.launchers.contains(name) { return true }
        return Self.interpreterPrefixes.contains { name.hasPrefix($0) }
    }

    /// A program's name as the lists below spell it: without the version or flavour Debian's files
    /// carry (`tclsh8.6`, `python3.11`, `vim.basic`, `wish8.6` are tclsh, python, vim, wish).
    static func baseName(_ name: String) -> String {
        var base = Substring(name.prefix { $0 != "." })
        while let last = base.last, ("0"..."9").contains(last) || last == "-" || last == "_" { base.removeLast() }
        return base.isEmpty ? name : String(base)
    }

    /// Programs whose names start so run code of anybody's: interpreters, and the dynamic loader.
    static let interpreterPrefixes = [
        "python", "perl", "ruby", "node", "lua", "php", "pypy", "ld-linux", "guile", "julia", "Rscript", "racket", "sbcl",
    ]

    /// Programs that run other programs for anyone: shells, launchers and wrappers, interpreters of
    /// small languages that run commands (awk, sed's `e`, m4), editors, pagers and debuggers that run
    /// a shell or attach to one, and the session's init.
    static let launchers: Set<String> = [
        // shells
        "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "tcsh", "csh", "busybox", "toybox", "rbash", "yash", "elvish", "nu",
        // launchers and wrappers
        "env", "systemd", "init", "sudo", "sudoedit", "su", "doas", "pkexec", "runuser", "setsid", "nohup", "timeout", "xargs",
        "nice", "ionice", "stdbuf", "script", "tmux", "screen", "sshd", "ssh", "sshd-session", "latchkey", "flatpak-spawn",
        "bwrap", "time", "flock", "watch", "unshare", "nsenter", "setpriv", "chroot", "capsh", "taskset", "chrt", "prlimit",
        "numactl", "systemd-run", "dbus-run-session", "dbus-launch", "ssh-agent", "run-parts", "start-stop-daemon", "parallel",
        "rlwrap", "find", "cron", "crond", "make", "ninja", "cmake", "xterm", "x-terminal-emulator", "gnome-terminal", "konsole",
        "tini", "dumb-init", "catatonit",
        // languages that run commands
        "java", "tclsh", "wish", "expect", "awk", "gawk", "mawk", "nawk", "sed", "m4", "R", "ocaml", "ghci", "runghc", "erl",
        "escript", "deno", "bun", "dotnet", "mono", "groovy", "scala", "kotlin",
        // editors, pagers and debuggers (each runs a shell, or any code, on request)
        "vi", "vim", "nvim", "view", "ex", "emacs", "nano", "ed", "less", "more", "man", "pager", "gdb", "lldb", "strace", "ltrace",
        "valgrind", "perf",
    ]

    enum CodingKeys: String, CodingKey {
        case path
        case flatpakID = "flatpak_id"
        case remoteHost = "remote_host"
        case hiddenName = "hidden_name"
    }
}

/// The machine an ssh command line connects to: its destination (`[user@]host`, or
/// `ssh://[user@]host[:port]`), the first argument that is not an option or an option's value.
public enum SSHDestination {
    /// ssh's options that take a value (ssh(1)), which may follow in the next argument.
    static let optionsWithValue = Set("BbcDEeFIiJLlmOoPpQRSWw")

    /// The host `commandLine` (ssh's, starting with the program) connects to; "an unnamed host"
    /// when none can be told, so that a forwarded caller is never taken for a local one.
    public static func host(in commandLine: [String]) -> String {
        var index = 1
        while index < commandLine.count {
            let argument = commandLine[index]
            if argument == "--" {
                index += 1
                break
            }
            guard argument.hasPrefix("-"), argument.count > 1 else { break }
            // Flags run together (-4A, -vvv); the first that takes a value ends them, its value
            // the rest of this argument (-p22) or, when nothing is left, the next one (-p 22).
            let flags = Array(argument.dropFirst())
            if let position = flags.firstIndex(where: optionsWithValue.contains), position == flags.count - 1 { index += 1 }
            index += 1
        }
        guard index < commandLine.count else { return unnamed }
        var destination = Substring(commandLine[index])
        if destination.hasPrefix("ssh://") {
            destination = destination.dropFirst("ssh://".count).prefix { $0 != "/" }
            if let at = destination.lastIndex(of: "@") { destination = destination[destination.index(after: at)...] }
            if !destination.hasPrefix("["), let colon = destination.lastIndex(of: ":") { destination = destination[..<colon] }
        } else if let at = destination.lastIndex(of: "@") {
            destination = destination[destination.index(after: at)...]
        }
        let host = String(destination)
        let allowed = host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-_:[]%".contains($0)) }
        return !host.isEmpty && host.count <= 253 && allowed ? host : unnamed
    }

    static let unnamed = "an unnamed host"
}

/// The executable file behind a process, as `stat` sees it through `/proc/PID/exe`
/// (which reaches the file even after it was replaced on disk). A package upgrade
/// or a different file at the same path changes at least one of these.
public struct ExecutableFile: Sendable, Hashable, Codable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    /// Seconds since 1970, with nanoseconds.
    public var modified: Double

    public init(device: UInt64, inode: UInt64, size: Int64, modified: Double) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
    }

    /// The file of a program that hides it (`Program.hiddenName`): none that can be told.
    public static let unknown = ExecutableFile(device: 0, inode: 0, size: -1, modified: 0)
}
