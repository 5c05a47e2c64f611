import CSocket
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The one place a thread blocks to wait for another's word (scripts/house-rules.py: no
/// DispatchSemaphore anywhere else): a synchronous caller waiting for async work (`SyncBridge`,
/// `Pending`), and a thread waiting for another thread (`ThreadSignal`). Only threads of their own
/// wait here (a command's main thread, a connection's, a read's), never one of Swift's cooperative
/// pool, which has one thread per core.
package enum SyncBridge {
    /// `work`'s result, waited for on this thread.
    package static func wait<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        Pending(work).result()
    }

    /// `work`, started as a task of its own; its result is `Pending`'s to wait for.
    package static func start<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> Pending<T> {
        Pending(work)
    }
}

/// Async work under way, which a thread waits for, and can watch a descriptor meanwhile with the
/// same poll(2): the agent's connection learns that its caller hung up the moment it does, not at
/// the next turn of a timer.
package final class Pending<T: Sendable>: Sendable {
    private let answer = Mutex<T?>(nil)
    /// Readable once `answer` is set (an eventfd; poll waits on it beside the watched descriptor).
    private let finished: Int32
    /// Taken when no eventfd could be had: waiting falls back to a semaphore, watching nothing.
    private let fallback = DispatchSemaphore(value: 0)

    init(_ work: @escaping @Sendable () async -> T) {
        finished = csocket_eventfd()
        Task.detached { [self] in
            let value = await work()
            answer.withLock { $0 = value }
            if finished >= 0 {
                var one: UInt64 = 1
                _ = write(finished, &one, MemoryLayout<UInt64>.size)
            }
            fallback.signal()
        }
    }

    deinit {
        if finished >= 0 { close(finished) }
    }

    package enum Outcome {
        case finished(T)
        /// The watched descriptor reported these poll(2) events first.
        case descriptor(revents: Int16)
        case timedOut
    }

    /// Waits until the work finishes, `fd` reports one of `events` (POLLHUP and POLLERR always count),
    /// or `deadline` passes. A descriptor whose state stays (a hang-up) is reported at every call:
    /// watch it no more once it has been.
    package func wait(watching fd: Int32? = nil, for events: Int16 = 0, until deadline: DispatchTime? = nil) -> Outcome {
        guard finished >= 0 else { return waitWithoutDescriptors(until: deadline) }
        var descriptors = [pollfd(fd: finished, events: Int16(POLLIN), revents: 0)]
        if let fd { descriptors.append(pollfd(fd: fd, events: events, revents: 0)) }
        while true {
            if let value = answer.withLock({ $0 }) { return .finished(value) }
            var milliseconds: Int32 = -1
            if let deadline {
                let now = DispatchTime.now().uptimeNanoseconds
                guard deadline.uptimeNanoseconds > now else { return .timedOut }
                milliseconds = Int32(clamping: (deadline.uptimeNanoseconds - now + 999_999) / 1_000_000)
            }
            let ready = poll(&descriptors, nfds_t(descriptors.count), milliseconds)
            // poll itself failed (ENOMEM): the work's end is still told on the semaphore.
            if ready < 0, errno != EINTR { return waitWithoutDescriptors(until: deadline) }
            if ready > 0, descriptors.count > 1, descriptors[1].revents != 0, answer.withLock({ $0 }) == nil {
                return .descriptor(revents: descriptors[1].revents)
            }
        }
    }

    /// Without an eventfd (none could be had) or a working poll: the semaphore the work also signals,
    /// watching nothing (a hang-up is then heard only when the work ends).
    private func waitWithoutDescriptors(until deadline: DispatchTime?) -> Outcome {
        if let deadline, fallback.wait(timeout: deadline) == .timedOut { return .timedOut }
        if deadline == nil { fallback.wait() }
        fallback.signal()  // for the next wait, if any
        return answer.withLock { $0 }.map(Outcome.finished) ?? .timedOut
    }

    /// The work's result, however long it takes.
    package func result() -> T {
        while true {
            if case .finished(let value) = wait() { return value }
        }
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
