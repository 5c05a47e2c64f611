import FoundationEssentials

/// What the person is asked the first time a program wants a provider's token.
public struct ConsentQuestion: Sendable, Equatable {
    public let caller: Caller
    public let providerID: String
    public let providerName: String
    public let scopes: [String]
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
}

/// The sentences a refused program's user reads (oidc-token prints them after "Error: ").
public enum ConsentSentence {
    public static func denied(_ question: ConsentQuestion) -> String {
        "You did not allow \(question.caller.program.name) to get your \(question.providerName) token."
    }

    /// Asked, and nobody answered.
    public static func noAnswer(_ question: ConsentQuestion, after timeout: Duration) -> String {
        "Nobody answered whether \(question.caller.program.name) may get your \(question.providerName) token within "
            + "\(timeout.components.seconds / 60) minutes; it gets none this time."
    }

    /// No display to ask on: what to run instead.
    public static func nobodyToAsk(_ question: ConsentQuestion) -> String {
        let program = question.caller.program
        if program.remoteHost != nil {
            return "\(capitalised(program.name)) asked for your \(question.providerName) token, and Latchkey's agent has no display "
                + "to ask you on; a program reached through ssh is allowed only by an answer on the desktop."
        }
        if program.hiddenName != nil {
            return "\(capitalised(program.name)) asked for your \(question.providerName) token, and Latchkey's agent has no display "
                + "to ask you on; a program that hides which file it runs is allowed only by an answer on the desktop, each time."
        }
        if question.caller.connectionKeptAcrossExec {
            return "\(capitalised(program.name)) asked for your \(question.providerName) token, and Latchkey's agent has no display "
                + "to ask you on; its connection stays open across the programs it starts, so it may not be the program that "
                + "asked, and is asked about each time, on the desktop."
        }
        if program.runsOthers {
            return "\(capitalised(program.name)) asked for your \(question.providerName) token, and Latchkey's agent has no display "
                + "to ask you on; it runs other programs for anyone (a shell, an interpreter), so it is asked about each time, on the desktop."
        }
        let allow = program.flatpakID.map { "--flatpak \($0)" } ?? shellQuoted(program.path)
        return
            "\(program.name) asked for your \(question.providerName) token, and Latchkey's agent has no display to ask you on. "
            + "To allow it, run: latchkey agent allow \(allow) \(question.providerID)"
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
