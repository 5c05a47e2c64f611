import FoundationEssentials

/// When a program is told no before the person allowed it what it asked: in the order its
/// requests came, one refusal per `quiet`, none sooner than `least` after its request came.
///
/// Before it is allowed, a program must learn nothing from the agent's answers (issue 36 §7): not
/// from their words (`ConsentSentence`), and not from their timing either. A name there is none of
/// and a name there is but nobody can be asked about take different paths to their refusal; were
/// each said as soon as it was known, a program sending a burst of guesses would read off which
/// names exist from which answers came first. In line, each answer's time depends only on when the
/// program's requests came, and a program guesses at one name per `quiet`.
///
/// Every request of a program takes a ticket as it comes (`enter`). One that is allowed, or refused
/// for another reason after it was allowed, leaves the line at once (`leave`); a refusal before it
/// was allowed waits its turn (`wait`). A turn comes no sooner than `least` after the request came,
/// or `quiet` when deciding took longer than `least` with no question shown (deciding reads only
/// the person's files, but a slow disk must not tell which of them there are). At most
/// `mostWaiting` of a program's refusals wait in line at once; more are said a `quiet` after they
/// came, whatever they were for.
/// One whose caller hangs up leaves the line, but its turn is spent all the same: a program that
/// asks and hangs up (seeing whether a question shows) pays as one that waits.
///
/// A program's line is its Flatpak app id, one line for every program that hides its file (whose
/// name is its own say), one per host reached through ssh, else its path.
actor RefusalLine {
    struct Ticket: Sendable {
        let program: String
        let number: Int
        let entered: ContinuousClock.Instant
    }

    private struct Line {
        var next = 0
        /// Tickets not yet left, oldest first.
        var open: [Int] = []
        /// When the last refusal was said (or will be, by the one waiting for it).
        var lastTurn: ContinuousClock.Instant?
        var waiting = 0
        /// Signalled (and replaced) whenever a ticket leaves.
        var changed = HangUp()
        /// Out of line (`waitOutOfLine`): the last turn given, and how many wait for theirs.
        var lastOutOfLine: ContinuousClock.Instant?
        var outOfLineWaiting = 0
    }

    private var lines: [String: Line] = [:]
    let quiet: Duration
    let least: Duration
    let mostWaiting: Int

    init(quiet: Duration, least: Duration = .milliseconds(250), mostWaiting: Int = 4) {
        self.quiet = quiet
        self.least = least
        self.mostWaiting = mostWaiting
    }

    /// The line `program` stands in.
    static func line(of program: Program) -> String {
        if let app = program.flatpakID { return "flatpak " + app }
        if program.hiddenName != nil { return "hidden" }
        if let host = program.remoteHost { return "ssh " + host }
        return program.path
    }

    func enter(_ caller: Program) -> Ticket {
        let program = Self.line(of: caller)
        if lines.count > 64 { lines = lines.filter { !isForgotten($0.value) } }
        var line = lines[program] ?? Line()
        let ticket = Ticket(program: program, number: line.next, entered: .now)
        line.next += 1
        line.open.append(ticket.number)
        lines[program] = line
        return ticket
    }

    func leave(_ ticket: Ticket) {
        guard var line = lines[ticket.program] else { return }
        line.open.removeAll { $0 == ticket.number }
        line.changed.signal()
        line.changed = HangUp()
        lines[ticket.program] = isForgotten(line) ? nil : line
    }

    /// A line nobody stands in, whose last refusal is a quiet old (or that had none), is forgotten.
    private func isForgotten(_ line: Line) -> Bool {
        let now = ContinuousClock.now
        return line.open.isEmpty && line.outOfLineWaiting == 0 && (line.lastTurn.map { now - $0 >= quiet } ?? true)
            && (line.lastOutOfLine.map { now - $0 >= quiet } ?? true)
    }

    /// For a request that said nobody may be asked (`AgentRequest.interactive` false): it leaves the
    /// line at once, behind nothing of the program's, and returns at its own turn: `least` after it
    /// came (a `quiet` when deciding took longer), and `least` after the program's last such turn.
    /// Its refusal is the same in words and kind whether or not there is such a sign-in, so a CI job's
    /// next command need not wait a `quiet` behind its last (issue 40 §3); but a program sending many
    /// at once is answered four a second, and past `4 × mostWaiting` waiting, a `quiet` after each
    /// came: whether deciding took longer than `least` (the one thing a name could change) is not to
    /// be sampled at will.
    func waitOutOfLine(_ ticket: Ticket, hangUp: HangUp?) async {
        let program = ticket.program
        let slow = ContinuousClock.now - ticket.entered > least
        leave(ticket)
        var line = lines[program] ?? Line()
        guard line.outOfLineWaiting < mostWaiting * 4 else {
            return await Self.sleep(until: ticket.entered + quiet, unless: hangUp)
        }
        let floor = ticket.entered + (slow ? quiet : least)
        let turn = max(floor, line.lastOutOfLine.map { $0 + least } ?? floor)
        (line.lastOutOfLine, line.outOfLineWaiting) = (turn, line.outOfLineWaiting + 1)
        lines[program] = line
        await Self.sleep(until: turn, unless: hangUp)
        lines[program]?.outOfLineWaiting -= 1
    }

    /// Returns at the ticket's turn, or at once (too many of the program's refusals wait already, or
    /// its caller hung up); the ticket has left the line by then.
    /// `asked`: the refusal follows a question the person saw, whose answer took what it took (no
    /// later floor than `least` for it).
    func wait(_ ticket: Ticket, hangUp: HangUp?, asked: Bool = false) async {
        let program = ticket.program
        let slow = !asked && ContinuousClock.now - ticket.entered > least
        let floor = ticket.entered + (slow ? quiet : least)
        guard let waiting = lines[program]?.waiting, waiting < mostWaiting else {
            // Too many waiting: said a quiet after it came, out of line.
            leave(ticket)
            return await Self.sleep(until: ticket.entered + quiet, unless: hangUp)
        }
        lines[program]?.waiting += 1
        // First in the program's line: every earlier request has been answered.
        while let line = lines[program], line.open.first != ticket.number, hangUp?.happened != true {
            await Self.either(line.changed, hangUp)
        }
        if let line = lines[program] {
            // Spent even by a caller that hangs up (before its turn or while it waits for it): asking and
            // leaving costs what asking and waiting does; but no turn is set further off than a full
            // line's, so that callers that leave cannot push the others' back without end.
            let turn = min(max(floor, line.lastTurn.map { $0 + quiet } ?? .now), .now + quiet * mostWaiting)
            lines[program]?.lastTurn = turn
            if hangUp?.happened != true { await Self.sleep(until: turn, unless: hangUp) }
        }
        lines[program]?.waiting -= 1
        leave(ticket)
    }

    /// Returns once `first` or `second` is signalled.
    private static func either(_ first: HangUp, _ second: HangUp?) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await first.wait() }
            if let second { group.addTask { await second.wait() } }
            await group.next()
            group.cancelAll()
        }
    }

    private static func sleep(until instant: ContinuousClock.Instant, unless hangUp: HangUp?) async {
        guard let hangUp else { return (try? await Task.sleep(until: instant, clock: .continuous)) ?? () }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(until: instant, clock: .continuous) }
            group.addTask { await hangUp.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
