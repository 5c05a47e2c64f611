import FoundationEssentials
import OAuthCore

/// What the person is asked the first time a program wants a provider's token.
public struct ConsentQuestion: Sendable, Equatable {
    public let caller: Caller
    public let providerID: String
    public let providerName: String
    public let scopes: [String]
    /// The resource the token would be for alone; nil: the sign-in's own.
    public var resource: URL? = nil
    /// Whether the provider can narrow a token: if not, the program gets the whole token, and is told so.
    public var narrows = true
    /// The scopes in words, from the provider file.
    public var scopeWords: [String: String] = [:]
    /// Allowed before, for less than it asks now (`ProgramGrants.Decision.wider`): what it was allowed.
    public var allowedBefore: Narrowing? = nil
    /// What the program calls itself, if it says: shown as its claim, beside what the kernel says.
    public let applicationHint: String?
    /// Asked again because the program's executable changed since it was allowed.
    public let changed: Bool

    /// Whether "Always allow" is offered: not for a program that runs others (a shell, an
    /// interpreter), where it would allow whatever runs through it; nor for another machine reached
    /// through ssh, whose name comes from a command line that cannot be trusted to say where ssh went;
    /// nor for a program that hides which file it runs, whose name any program could take.
    public var offersAlways: Bool {
        !caller.runsOthers && caller.program.hiddenName == nil && !caller.connectionKeptAcrossExec && personKnown
    }

    /// Whether the agent knows who is signed in to the account (its subject's digest): a grant names
    /// that person, so without one nothing is kept.
    public let personKnown: Bool

    /// Whether "Allow while connected" is offered: for another machine reached through ssh, this
    /// request and the next ones through the same ssh process, for as long as it runs.
    public var offersWhileConnected: Bool { caller.program.remoteHost != nil }

    public init(
        caller: Caller, providerID: String, providerName: String, scopes: [String], applicationHint: String?, changed: Bool,
        personKnown: Bool = true
    ) {
        self.caller = caller
        self.personKnown = personKnown
        self.providerID = providerID
        self.providerName = providerName
        self.scopes = scopes
        self.applicationHint = applicationHint
        self.changed = changed
    }
}

/// The person's answer.
public enum ConsentAnswer: Sendable, Equatable {
    case allowOnce
    case alwaysAllow
    /// Through ssh: allowed until that ssh process ends, kept nowhere.
    case allowWhileConnected
    case deny
}

/// Who asks the person: the agent's dialog on the desktop.
public protocol ConsentAsker: Sendable {
    /// The person's answer; nil when there is nobody to ask (no display). Cancelled, it takes
    /// its question back (closes the dialog) and returns.
    func ask(_ question: ConsentQuestion) async -> ConsentAnswer?

    /// Whether there is anybody to ask (a display): what a program that asked for nothing there is
    /// is told, as it would be had there been something.
    var canAsk: Bool { get async }
}

/// The sentences a refused program's user reads (oidc-token prints them after "Error: ").
///
/// Until the person has allowed a program for an account, what it reads names only what it asked
/// for, in its own words, and is the same whether the person said no, nobody answered, or there is
/// no such provider or account: a program learns nothing of the person's sign-ins by asking.
public enum ConsentSentence {
    /// Not allowed: the person said no, nobody answered, or there is nothing by that name.
    public static func notAllowed(_ program: Program, asked request: AgentRequest) -> String {
        "\(capitalised(program.name)) gets no token for “\(request.asked)”: you have not allowed it that, or there is no such "
            + "sign-in (`latchkey status` lists yours)."
    }

    /// No display to ask on, or the program said nobody may be asked (`AgentRequest.interactive`):
    /// what to run instead. The same whether or not there is such a sign-in.
    public static func nobodyToAsk(_ caller: Caller, asked request: AgentRequest) -> String {
        let program = caller.program
        let why =
            request.interactive
            ? "Latchkey's agent has no display to ask you on"
            : "it may ask nobody (--no-interaction, CI, or git's credential.interactive=false), so you were not asked whether to allow it"
        let asked = "\(capitalised(program.name)) asked for a token for “\(request.asked)”, and \(why)"
        if program.remoteHost != nil {
            return asked + "; a program reached through ssh is allowed only by an answer on the desktop."
        }
        if program.hiddenName != nil {
            return asked + "; a program that hides which file it runs is allowed only by an answer on the desktop, each time."
        }
        if caller.connectionKeptAcrossExec {
            return asked
                + "; its connection stays open across the programs it starts, so it may not be the program that "
                + "asked, and is asked about each time, on the desktop."
        }
        if program.runsOthers {
            return asked + "; it runs other programs for anyone (a shell, an interpreter), so it is asked about each time, on the desktop."
        }
        let allow = "latchkey agent allow " + (program.flatpakID.map { "--flatpak \($0)" } ?? shellQuoted(program.path))
        guard case .provider = request.target else {
            return asked + ". To allow it, run: \(allow) PROVIDER, naming the provider `latchkey status` lists for it."
        }
        return asked + ". To allow it, run: \(allow) \(shellQuoted(request.asked))"
    }

    /// A sentence's first words: "A program on devbox …" for one reached through ssh, "A program that
    /// hides …"; any other name (a path, an app id) as it is.
    public static func capitalised(_ name: String) -> String {
        name.hasPrefix("a program ") ? "A" + name.dropFirst() : name
    }

    static func shellQuoted(_ text: String) -> String {
        let plain = text.allSatisfy { $0.isLetter || $0.isNumber || "/._-+".contains($0) }
        return plain ? text : "'" + text.replacing("'", with: "'\\''") + "'"
    }
}
