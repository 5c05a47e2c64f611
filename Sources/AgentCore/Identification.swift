import Dispatch
import FoundationEssentials
import OAuthCore
import Synchronization

/// Reading who a caller is (its `/proc`, its root, its descriptors) on a thread of its own, given
/// up on after a while, and never more than `most` at once: a caller that makes those reads hang
/// (a process stuck in the kernel, a FUSE file system that never answers) costs a thread of its
/// own and its own request, never the agent's other callers, nor the threads everything else runs on.
public enum Identification {
    /// Reads under way, finished or not (one that hangs stays counted).
    static let underWay = Atomic<Int>(0)
    public static let most = 32
    /// Seconds one identification may take.
    public static let longest = 5.0

    /// `work`'s result, waited for on this (blocking) thread; nil when it took longer than `longest`,
    /// too many are under way, or no thread could be had.
    public static func blocking<T: Sendable>(_ work: @escaping @Sendable () -> T) -> T? {
        guard take() else { return nil }
        let answer = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        guard
            BlockingWork.startThread({
                let result = work()
                answer.withLock { $0 = result }
                underWay.subtract(1, ordering: .relaxed)
                done.signal()
            })
        else {
            underWay.subtract(1, ordering: .relaxed)
            return nil
        }
        guard done.wait(timeout: .now() + longest) == .success else { return nil }
        return answer.withLock { $0 }
    }

    /// `work`'s result, awaited; nil as for `blocking`.
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T? {
        await withCheckedContinuation { continuation in
            // The waiting is a thread of its own too: the pool's few threads never wait.
            if !BlockingWork.startThread({ continuation.resume(returning: blocking(work)) }) { continuation.resume(returning: nil) }
        }
    }

    private static func take() -> Bool {
        let (taken, _) = underWay.wrappingAdd(1, ordering: .relaxed)
        guard taken < most else {
            underWay.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }
}
