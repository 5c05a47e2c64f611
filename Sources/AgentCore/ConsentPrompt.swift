import OAuthCore

/// A question as the person sees it: every word of the consent dialog, decided here, by the agent,
/// and handed as one line of JSON to the process that draws it (`latchkey-app agent ask`), which
/// needs to know nothing of callers, grants or the kernel's word on them.
///
/// Every text is printable already (`Redaction.printable`): nothing a caller chose can move the
/// dialog's lines or hide part of them.
public struct ConsentPrompt: Sendable, Equatable {
    /// The program's name, capitalised, as the headline names it.
    public let program: String
    public let provider: String
    /// Labelled lines: which program (file, command line, who started it), provider and scopes.
    public let particulars: [Particular]
    /// Under the particulars: what an answer gives away.
    public let note: String
    /// Asked again because the program's file changed since it was allowed.
    public let changed: Bool
    /// The answers beside Deny and Allow once: Always allow, or Allow while connected, or neither.
    public let offersAlways: Bool
    public let offersWhileConnected: Bool

    public struct Particular: Sendable, Equatable {
        public let name: String
        public let value: String

        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(
        program: String, provider: String, particulars: [Particular], note: String, changed: Bool, offersAlways: Bool,
        offersWhileConnected: Bool
    ) {
        self.program = program
        self.provider = provider
        self.particulars = particulars
        self.note = note
        self.changed = changed
        self.offersAlways = offersAlways
        self.offersWhileConnected = offersWhileConnected
    }

    /// `exports`: where Flatpak's desktop entries are, whose names a sandboxed app is called by.
    public init(_ question: ConsentQuestion, exports: [String] = FlatpakApps.exports) {
        // A sandboxed app by the name your apps menu shows, quoted (its publisher chose it), and always its
        // app id beside it.
        let program = question.caller.program
        let named = program.flatpakID.flatMap { id in FlatpakApps.desktopName(of: id, in: exports).map { "\u{201C}\($0)\u{201D} (\(id))" } }
        self.init(
            program: named ?? ConsentSentence.capitalised(Redaction.printable(program.name)),
            provider: Redaction.printable(question.providerName), particulars: Self.particulars(question), note: Self.note(question),
            changed: question.changed, offersAlways: question.offersAlways,
            offersWhileConnected: !question.offersAlways && question.offersWhileConnected)
    }

    /// What an answer gives away, for this caller.
    static func note(_ question: ConsentQuestion) -> String {
        let program = question.caller.program
        let name = Redaction.printable(program.name)
        if let host = program.remoteHost {
            return "The agent's socket is forwarded to \(Redaction.printable(host)) (as ssh's command line names it) with ssh -R: "
                + "whatever runs there as you, through this connection, gets the token if you allow it. Allow while connected "
                + "covers what asks through this ssh until it ends, and is kept nowhere."
        }
        if let hidden = program.hiddenName {
            return "It made itself unreadable to your other programs (oidc-token and ssh-agent do, against memory dumps), so "
                + "Latchkey cannot see which program file it runs, nor whether it runs in a sandbox: \u{201C}\(Redaction.printable(hidden))\u{201D} "
                + "and its command line are only what it says of itself. Latchkey asks each time."
        }
        if question.caller.connectionKeptAcrossExec {
            return "Its connection to Latchkey stays open across the programs it starts, so it may have been opened by another "
                + "program than \(name), which this process ran before: Latchkey asks each time."
        }
        if program.flatpakID != nil {
            return "A Flatpak app cannot read your keyring itself: this answer is what lets it have the token or not."
        }
        if !question.offersAlways {
            return "\(name) runs other programs for anyone, so Latchkey asks each time rather than allow it always."
        }
        return "Any program that runs \(name) gets the token through it too. Programs of yours could also read your keyring "
            + "directly: this question is a record and a check, as ssh-add -c is."
    }

    /// What the person is told of the program, each line labelled.
    static func particulars(_ question: ConsentQuestion) -> [Particular] {
        let caller = question.caller
        var lines: [Particular] = []
        if let host = caller.program.remoteHost { lines.append(.init("Remote host", host)) }
        if let flatpak = caller.program.flatpakID { lines.append(.init("Flatpak app", flatpak)) }
        let runsFrom = caller.runsFrom.map { " (run as \($0), the same file)" } ?? ""
        lines.append(.init("Program", caller.program.hiddenName.map { "hidden (it calls itself \($0))" } ?? caller.program.path + runsFrom))
        lines.append(.init("Command line", caller.commandLine.joined(separator: " ")))
        if let parent = caller.startedBy { lines.append(.init("Started by", parent)) }
        if let through = caller.through { lines.append(.init("Asked through", through)) }
        if let hint = question.applicationHint { lines.append(.init("Calls itself", hint)) }
        lines.append(.init("Provider", question.providerName))
        lines.append(.init("Wants", wants(question)))
        if let resource = question.resource { lines.append(.init("For", resource.absoluteString + " alone")) }
        if let before = question.allowedBefore {
            lines.append(.init("Allowed before", before.scopes.isEmpty ? "whatever your sign-in allows" : words(before.scopes, question)))
        }
        return lines.map { .init($0.name, Redaction.printable($0.value)) }
    }

    /// What the program wants, in the provider file's words for its scopes (their names otherwise), and
    /// whether it will get only that.
    static func wants(_ question: ConsentQuestion) -> String {
        guard !question.scopes.isEmpty || question.resource != nil else { return "whatever your sign-in allows" }
        let asked = question.scopes.isEmpty ? "everything your sign-in allows" : words(question.scopes, question)
        guard question.narrows else {
            return asked + ". \(question.providerName) cannot give a narrower token: the program gets your whole token, "
                + "and can do all your sign-in allows"
        }
        return asked + " (its token carries no more)"
    }

    static func words(_ scopes: [String], _ question: ConsentQuestion) -> String {
        scopes.map { scope in question.scopeWords[scope].map { "\($0) (\(scope))" } ?? scope }.joined(separator: ", ")
    }

    // MARK: On the wire

    /// One line of JSON (no line break inside: JSON escapes them).
    public var line: String {
        let value: JSONValue = [
            "program": .string(program), "provider": .string(provider),
            "particulars": .array(particulars.map { [.string($0.name), .string($0.value)] }),
            "note": .string(note), "changed": .bool(changed), "offers_always": .bool(offersAlways),
            "offers_while_connected": .bool(offersWhileConnected),
        ]
        return value.text(spaced: false)
    }

    /// A prompt read back from its line; nil for anything that is not one, whole.
    public init?(line: some Collection<UInt8>) {
        guard let value = JSONValue.object(parsing: line), let program = value["program"]?.string,
            let provider = value["provider"]?.string, let note = value["note"]?.string, let rows = value["particulars"]?.array,
            let changed = value["changed"]?.bool, let always = value["offers_always"]?.bool,
            let whileConnected = value["offers_while_connected"]?.bool
        else { return nil }
        var particulars: [Particular] = []
        for row in rows {
            guard let pair = row.strings, pair.count == 2 else { return nil }
            particulars.append(.init(pair[0], pair[1]))
        }
        self.init(
            program: program, provider: provider, particulars: particulars, note: note, changed: changed, offersAlways: always,
            offersWhileConnected: whileConnected)
    }
}

extension ConsentAnswer {
    /// The answer as the dialog's process writes it back: one word on a line.
    public var word: String {
        switch self {
        case .allowOnce: "once"
        case .alwaysAllow: "always"
        case .allowWhileConnected: "while-connected"
        case .deny: "deny"
        }
    }

    public init?(word: some StringProtocol) {
        switch word {
        case "once": self = .allowOnce
        case "always": self = .alwaysAllow
        case "while-connected": self = .allowWhileConnected
        case "deny": self = .deny
        default: return nil
        }
    }
}
