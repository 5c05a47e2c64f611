import Dispatch
import FoundationEssentials
import OAuthCore
import Synchronization

/// Reading who a caller is (its `/proc`, its root, its descriptors) on a thread of its own, given
/// up on after a while, and never more than `most` at once (more wait their turn, within the same
/// while): a caller that makes those reads hang
/// (a process stuck in the kernel, a FUSE file system that never answers) costs a thread of its
/// own and its own request, never the agent's other callers, nor the threads everything else runs on.
///
/// Each read is counted against a key, the program the caller runs (`key(of:)`): once a program
/// has `mostOverduePerProgram` reads given up on and still hanging, its next callers are refused at
/// once, so that one stuck program cannot take up the `most` threads every caller shares. A burst
/// of quick reads for one program (a build asking for eight tokens at once) is never refused for that.
public enum Identification {
    public static let most = 32
    public static let mostOverduePerProgram = 2
    /// Seconds one identification may take.
    public static let longest = 5.0

    /// Reads given up on and still hanging, by key.
    private static let overdue = Mutex<[String: Int]>([:])
    /// Reads under way, finished or not (one that hangs keeps its slot): past `most`, a read waits
    /// for a slot (as long as it would wait for its answer) rather than being refused at once.
    private static let slots = ThreadSignal(most)

    /// What a read for `pid` is counted against: the program it runs, as `/proc/PID/exe` names it
    /// (reading that link never waits on the file or its file system); for Latchkey's own command,
    /// which asks for the program that ran it, that program; for a process that hides its file, the
    /// name it runs under. So one program's stuck or many callers cost that program, not every
    /// `latchkey token` of everyone's, nor every program that hides.
    public static func key(of pid: Int32, own: OwnExecutable = .none, proc: String = "/proc") -> String {
        guard let path = ProcessFiles.readLink("\(proc)/\(pid)/exe").map(ProcessFiles.undeleted) else {
            return "hidden: " + (ProcessFiles.commandName(pid, proc) ?? "")
        }
        if own.paths.contains(path), let fields = ProcessFiles.statFields(pid, proc), fields.count > 1, let parent = Int32(fields[1]),
            parent > 1
        {
            let behind = key(of: parent, own: .none, proc: proc)
            // A shell runs everybody's scripts: each shell process is a program of its own here.
            return Program(path: behind).runsOthers ? "\(behind), process \(parent)" : behind
        }
        // A sandbox's /usr/bin/python3 is not the host's: named with its mount namespace.
        if let theirs = ProcessFiles.readLink("\(proc)/\(pid)/ns/mnt"), theirs != ProcessFiles.readLink("\(proc)/self/ns/mnt") {
            return "\(theirs) \(path)"
        }
        return path
    }

    /// `work`'s result, waited for on this (blocking) thread; nil when it (with its wait for a slot)
    /// took longer than `seconds`, `key` has too many overdue, or no thread could be had.
    public static func blocking<T: Sendable>(
        for key: String, within seconds: Double = longest, _ work: @escaping @Sendable () -> T
    ) -> T? {
        guard overdue.withLock({ $0[key, default: 0] < mostOverduePerProgram }) else { return nil }
        let waitedFrom = DispatchTime.now()
        guard slots.wait(until: waitedFrom + seconds) else { return nil }
        // Whether this read was given up on, under `overdue`'s lock: whoever comes second (the work
        // finishing, the wait giving up) settles the counts.
        let read = Mutex<(answer: T?, finished: Bool, givenUp: Bool)>((nil, false, false))
        let done = ThreadSignal()
        guard
            BlockingWork.startThread({
                let result = work()
                overdue.withLock { overdue in
                    read.withLock { read in
                        read.answer = result
                        read.finished = true
                        if read.givenUp { overdue[key, default: 1] -= 1 }
                    }
                    if overdue[key] == 0 { overdue[key] = nil }
                }
                slots.signal()
                done.signal()
            })
        else {
            slots.signal()
            return nil
        }
        if done.wait(until: waitedFrom + seconds) { return read.withLock { $0.answer } }
        return overdue.withLock { overdue in
            read.withLock { read in
                if read.finished { return read.answer }
                read.givenUp = true
                overdue[key, default: 0] += 1
                return nil
            }
        }
    }

    /// `work`'s result for the process `pid`, awaited, counted against `key(of:own:)` (read on the
    /// thread the work runs on: the pool's threads never read /proc); nil as for `blocking`.
    public static func run<T: Sendable>(
        forProcess pid: Int32, own: OwnExecutable = .none, within seconds: Double = longest, _ work: @escaping @Sendable () -> T
    ) async -> T? {
        await onThread { blocking(for: key(of: pid, own: own), within: seconds, work) }
    }

    /// `work`'s result, awaited; nil as for `blocking`.
    public static func run<T: Sendable>(
        for key: String, within seconds: Double = longest, _ work: @escaping @Sendable () -> T
    ) async -> T? {
        await onThread { blocking(for: key, within: seconds, work) }
    }

    /// `body`'s result, waited for on a thread of its own: the pool's few threads never wait.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T?) async -> T? {
        await withCheckedContinuation { continuation in
            if !BlockingWork.startThread({ continuation.resume(returning: body()) }) { continuation.resume(returning: nil) }
        }
    }
}
