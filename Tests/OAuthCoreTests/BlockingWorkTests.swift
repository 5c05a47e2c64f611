import Foundation
import Testing

@testable import OAuthCore

/// A keyring prompt nobody answers must not stall everything else: blocking
/// work waits on threads of its own, never on the cooperative pool's.
@Suite struct BlockingWorkTests {
    @Test func workThatWaitsHoldsNoThreadOfThePool() async throws {
        let prompt = DispatchSemaphore(value: 0)
        let width = 4 * ProcessInfo.processInfo.activeProcessorCount
        // More waiters than the pool has threads, each as stuck as an unanswered prompt.
        let waiters = (0..<width).map { _ in
            Task { await BlockingWork.run { prompt.wait() } }
        }
        // Other work must still get a thread. Had the waiters held the pool, it
        // would never run: the deadline is kept by a thread outside the pool,
        // which then lets the waiters go, so the test fails instead of hanging.
        let firstAnswer = FirstAnswer()
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 30)
            if firstAnswer.give(nil) { for _ in 0..<width { prompt.signal() } }
        }
        let answer: Int? = await withCheckedContinuation { continuation in
            firstAnswer.waiting(continuation)
            Task.detached { _ = firstAnswer.give((1...1000).reduce(0, +)) }
        }
        #expect(answer == 500_500, "other work ran while \(width) calls waited")
        if answer != nil { for _ in 0..<width { prompt.signal() } }
        for waiter in waiters { await waiter.value }
    }
}

/// The first of two answers, handed to one waiting task.
private final class FirstAnswer: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Int?, Never>?
    private var given: Int??

    func waiting(_ continuation: CheckedContinuation<Int?, Never>) {
        let early = lock.withLock { () -> Int?? in
            if given == nil { self.continuation = continuation }
            return given
        }
        if let early { continuation.resume(returning: early) }
    }

    /// True when this was the first answer.
    func give(_ value: Int?) -> Bool {
        let (first, waiting) = lock.withLock { () -> (Bool, CheckedContinuation<Int?, Never>?) in
            guard given == nil else { return (false, nil) }
            given = .some(value)
            defer { continuation = nil }
            return (true, continuation)
        }
        waiting?.resume(returning: value)
        return first
    }
}
