import Synchronization

/// That a caller went away while its request was under way: its connection closed (the program
/// ended, or the ssh connection that forwarded the socket dropped). A question asked for it is
/// then taken back rather than left on the screen for nobody.
public final class HangUp: Sendable {
    private struct State {
        var happened = false
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var next = 0
    }
    private let state = Mutex(State())

    public init() {}

    public var happened: Bool { state.withLock { $0.happened } }

    /// Marks it, and wakes everyone waiting.
    public func signal() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.happened else { return [] }
            state.happened = true
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Returns once the caller has gone, or the waiting task is cancelled.
    public func wait() async {
        let id = state.withLock { state -> Int in
            state.next += 1
            return state.next
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.happened || Task.isCancelled { return true }
                    state.waiting[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { $0.waiting.removeValue(forKey: id) }
            continuation?.resume()
        }
    }
}
