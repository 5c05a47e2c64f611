import AgentCore
import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GtkKit
import InstallLayout
import LatchkeyCore
import LatchkeyServices
import Logging
import OAuthCore

/// `latchkey agent`: the agent other programs get tokens from, and the person's list of
/// programs it may give them to.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Give other programs your tokens, with your say: over D-Bus, oidc-agent's socket and git.",
        discussion: """
            `latchkey agent` runs the agent (D-Bus starts it when a program first asks; one runs per session). \
            The first time a program asks for a provider's token, you are asked: Allow once, Always allow or Deny.
            """,
        subcommands: [
            AgentRunCommand.self, AgentAllowCommand.self, AgentForgetCommand.self, AgentListCommand.self, AgentEnvironmentCommand.self,
            AgentAskCommand.self, AgentSignInCommand.self,
        ],
        defaultSubcommand: AgentRunCommand.self)
}

struct AgentRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the agent (what `latchkey agent` alone does).")

    @OptionGroup var waits: Waits

    @OptionGroup var logging: LoggingOptions

    /// The agent is a program of its own, `latchkey-agent`, beside the app: this process becomes it.
    func run() throws {
        let agent = InstallLayout.current.beside("latchkey-agent").path
        var words = [agent] + waits.arguments
        if let level = logging.named { words += ["--log-level", level.level.rawValue] }
        let argv = words.map { strdup($0) } + [nil]
        execv(agent, argv)
        throw LaunchError("Latchkey's agent (\(agent)) could not be started: \(String(cString: strerror(errno))).")
    }
}

/// Names a program as the person does: its executable's path, or a Flatpak app's id.
struct ProgramName: ParsableArguments {
    @Argument(help: "The program's executable (as `latchkey agent list` shows it), or a Flatpak app id with --flatpak.")
    var program: String

    @Argument(
        help:
            "The provider's id, as `latchkey status` lists it (its account in use); provider/account for one of its accounts (by e-mail address or name)."
    )
    var named: String

    @Flag(help: "The program is a Flatpak app, named by its app id.")
    var flatpak = false

    func validate() throws {
        guard flatpak || program.hasPrefix("/") else {
            throw ValidationError("Name the program by its whole path (such as /usr/bin/oidc-token), or a Flatpak app id with --flatpak.")
        }
        let id = ProviderAccount(named).providerID
        guard LatchkeyCommand.catalog.contains(id) else {
            throw ValidationError("There is no provider called “\(id)”; `latchkey status` lists them.")
        }
        _ = try provider
    }

    /// What the program is allowed for: the account's key (the provider's id for its first account).
    var provider: String {
        get throws {
            // An account's key as the agent's own sentences name it (`github@0a1b2c3d4e5f`).
            if AccountList.isStorageKey(named) { return named }
            // The provider alone: the account in use, as a program asking for the provider gets; else
            // the account named, found as the agent finds it.
            let asked = ProviderAccount(named)
            let id = asked.provider
            do { return try LatchkeyFiles.accounts.entry(for: id).key(forAccount: asked.account, of: id, displayName: id) } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    /// Who is signed in to that account (the digest of the provider's subject): a grant is that person's.
    var person: String {
        get throws {
            let key = try provider
            let id = ProviderAccount(named).providerID
            // Where nobody signs in to the provider itself: the client's own, or the person at its identity provider.
            let kind = try? LatchkeyCommand.catalog.questionWords(named: id).standIn
            let standIn = TokenBroker.person(standIn: kind, accounts: LatchkeyFiles.accounts)
            guard
                let person = TokenBroker.person(
                    signedIn: LatchkeyFiles.accounts.entry(for: id).account(key: key)?.subject, standIn: standIn, kind)
            else {
                throw LaunchError(
                    "Nobody Latchkey knows is signed in to \(named): a program is allowed for the person signed in. Sign in first.")
            }
            return person
        }
    }

    /// A path as the kernel would name it (links resolved), so that it matches what the agent sees.
    var value: Program {
        flatpak
            ? Program(path: "", flatpakID: program)
            : Program(path: URL(fileURLWithPath: program).resolvingSymlinksInPath().path)
    }
}

struct AgentAllowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "allow",
        abstract: "Always allow a program to get a provider's token (where there is no display to ask on).",
        discussion: "Allowed by name, whatever file is at that path from now on; a program allowed in the dialog is tied to its file.")

    @OptionGroup var name: ProgramName

    @Flag(help: "Allow it although it runs other programs for anyone (a shell, an interpreter): then every program it runs gets the token.")
    var includingWhatItRuns = false

    @OptionGroup var narrowing: NarrowingOptions

    func validate() throws {
        guard !name.value.runsOthers || includingWhatItRuns else {
            throw ValidationError(
                "\(name.program) runs other programs for anyone (it is a shell, an interpreter or a launcher), so allowing it would "
                    + "allow every program it runs. The agent asks about it each time instead. To allow it all the same, add "
                    + "--including-what-it-runs.")
        }
    }

    func run() throws {
        let narrowing = self.narrowing.value
        try LatchkeyFiles.allowedPrograms.allow(
            name.value, file: nil, provider: try name.provider, person: try name.person, scopes: narrowing.scopes,
            resource: narrowing.resource)
        print(
            "\(name.program) may now get your \(name.named) token without asking" + (narrowing.isWhole ? "." : ", for \(narrowing) alone."))
    }
}

struct AgentForgetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget", abstract: "Revoke a program: it is asked again the next time it wants a token.")

    @OptionGroup var name: ProgramName

    func run() throws {
        let grants = LatchkeyFiles.allowedPrograms
        let (wanted, provider) = (name.value, try name.provider)
        guard
            let grant = grants.all.first(where: {
                ($0.program == wanted || (name.flatpak && $0.program.flatpakID == name.program)) && $0.provider == provider
            })
        else { throw LaunchError("\(name.program) is not allowed for \(name.named); `latchkey agent list` shows who is.") }
        try grants.forget(grant.program, provider: provider)
        print("\(name.program) will be asked again before it gets your \(name.named) token.")
    }
}

struct AgentListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "The programs always allowed, with when each last got a token (never a token).")

    func run() throws {
        let grants = LatchkeyFiles.allowedPrograms
        if let problem = grants.problem { Descriptor.standardError.write("latchkey: \(problem)\n") }
        let all = grants.all
        guard !all.isEmpty else { return print("No program is allowed yet.") }
        let now = Date()
        for grant in all {
            print(
                "\(grant.program.name)\t\(ProgramsDialog.detail(grant, provider: ProgramsDialog.name(of: grant, providerNames: [:]), now: now))"
            )
        }
    }
}

struct AgentEnvironmentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "env",
        abstract: "Start the agent if none runs; print OIDC_SOCK for oidc-agent's clients: eval \"$(latchkey agent env)\".",
        discussion:
            "D-Bus starts the agent for D-Bus callers; nothing starts it for the socket, so this does, as eval \"$(ssh-agent)\" does.")

    func run() throws {
        guard let path = AgentSocket.defaultPath() else {
            throw LaunchError("XDG_RUNTIME_DIR is not set, so the agent has no socket here; D-Bus still serves.")
        }
        if !AgentSocket.isServed(at: path) { try Self.startAgent(servingAt: path) }
        print("OIDC_SOCK=\(path); export OIDC_SOCK;")
    }

    /// Most seconds a started agent may take to serve its socket.
    static let startingTime = 15.0

    /// `latchkey agent`, in a session of its own with nothing of this command's (its output is the
    /// shell's command substitution, which waits for every holder of the pipe), until it serves `path`.
    static func startAgent(servingAt path: String) throws {
        let front = InstallLayout.current.program("latchkey").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let words: [String] = [front, "agent"]
        let argv = words.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        let result = withCleanSpawnAttributes(flags: spawnSetSID) { posix_spawn(&pid, front, &actions, $0, argv, environ) }
        guard result == 0 else { throw LaunchError("Latchkey's agent could not be started (\(String(cString: strerror(result)))).") }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(startingTime * 1e9)
        while !AgentSocket.isServed(at: path) {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw LaunchError("Latchkey's agent ended as it started; `latchkey agent` in a terminal says why.")
            }
            guard DispatchTime.now().uptimeNanoseconds < deadline else {
                throw LaunchError("Latchkey's agent did not serve \(path) within \(Int(startingTime)) seconds.")
            }
            usleep(20_000)
        }
    }

    /// POSIX_SPAWN_SETSID (glibc 2.26), which the Glibc module does not import.
    static let spawnSetSID: Int32 = 0x80
}
