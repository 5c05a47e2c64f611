import Dispatch
import Synchronization

/// The one place a thread blocks to wait for another's word (scripts/house-rules.py: no
/// DispatchSemaphore anywhere else): a synchronous caller waiting for async work (`SyncBridge`),
/// and a thread waiting for another thread (`ThreadSignal`). Only threads of their own wait here (a
/// command's main thread, a read's), never one of Swift's cooperative pool, which has one thread
/// per core.
package enum SyncBridge {
    /// `work`'s result, waited for on this thread.
    package static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let answer = Mutex<T?>(nil)
        let done = ThreadSignal()
        Task.detached {
            let value = await work()
            answer.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return answer.withLock { $0 }!
    }
}

/// One thread's word to another: `signal` lets one waiter (or the next to wait) go on.
package final class ThreadSignal: Sendable {
    private let semaphore: DispatchSemaphore

    package init(_ count: Int = 0) {
        semaphore = DispatchSemaphore(value: count)
    }

    package func signal() { semaphore.signal() }

    /// Waits for a signal; false when `deadline` passed first.
    @discardableResult
    package func wait(until deadline: DispatchTime = .distantFuture) -> Bool { semaphore.wait(timeout: deadline) == .success }
}
