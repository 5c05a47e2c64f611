import Foundation

/// Work that blocks (a D-Bus round trip, a keyring's password prompt) runs on
/// a thread of its own, so that no thread of Swift's small cooperative pool
/// waits on it; the caller suspends instead.
public enum BlockingWork {
    public static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }
}
