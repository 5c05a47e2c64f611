import Dispatch
import OAuthCore
import Synchronization

/// Threads for the socket's connections: one per connection being served, as many as
/// `most`, kept for 30 seconds once idle so that a steady stream of callers reuses them
/// instead of starting a thread for each (64 callers without pause started thousands a
/// second). A connection may wait minutes on the person's answer, so connections are never
/// queued behind one another: each gets a thread, or none is to be had and it is refused.
final class WorkerThreads: Sendable {
    typealias Job = @Sendable () -> Void

    private struct State {
        var queue: [(number: Int, job: Job)] = []
        var idle = 0
        var threads = 0
        var submitted = 0
    }

    private let state = Mutex(State())
    private let wake = ThreadSignal()
    let most: Int
    static let idleSeconds = 30

    init(most: Int) {
        self.most = most
    }

    /// How many threads wait for a job.
    var idleThreads: Int { state.withLock { $0.idle } }

    /// Runs `job` on an idle thread, or a new one; false (and `job` not run) when `most` are busy.
    func run(_ job: @escaping Job) -> Bool {
        enum Next {
            case refuse, wake
            case start(Int)
        }
        let next: Next = state.withLock { state in
            if state.idle == 0, state.threads >= most { return .refuse }
            state.submitted += 1
            state.queue.append((state.submitted, job))
            if state.idle > 0 {
                state.idle -= 1
                return .wake
            }
            state.threads += 1
            return .start(state.submitted)
        }
        switch next {
        case .refuse: return false
        case .wake: wake.signal()
        case .start(let number):
            guard BlockingWork.startThread({ [self] in loop() }) else {
                // No thread to be had: the job is taken back, unless a thread that came idle took it meanwhile.
                return state.withLock { state in
                    state.threads -= 1
                    guard let index = state.queue.firstIndex(where: { $0.number == number }) else { return true }
                    state.queue.remove(at: index)
                    return false
                }
            }
        }
        return true
    }

    private func loop() {
        while true {
            if let job = state.withLock({ $0.queue.isEmpty ? nil : $0.queue.removeFirst().job }) {
                job()
                continue
            }
            state.withLock { $0.idle += 1 }
            if !wake.wait(until: .now() + .seconds(Self.idleSeconds)) {
                let leave = state.withLock { state in
                    // Still counted idle: nobody handed this thread anything, so it goes.
                    guard state.idle > 0 else { return false }
                    state.idle -= 1
                    state.threads -= 1
                    return true
                }
                if leave { return }
                wake.wait()  // a job was handed over as the time ran out: the signal is this thread's
            }
        }
    }
}
