import Foundation
import Synchronization
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

    /// A thread whose body returned takes the next body rather than a new thread being started for
    /// it: twenty bodies one after another run on a few threads, not twenty.
    @Test func aThreadWhoseBodyReturnedRunsTheNext() {
        // The kernel's name for the thread ("PID/task/TID"), which a thread started after another ended
        // does not take over (pthread_self's can: it is where the thread's memory was).
        @Sendable func thisThread() -> String {
            var buffer = [CChar](repeating: 0, count: 64)
            let length = readlink("/proc/thread-self", &buffer, buffer.count - 1)
            return length > 0 ? String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        }
        var threads = Set<String>()
        for _ in 0..<20 {
            let ran = DispatchSemaphore(value: 0)
            let thread = Mutex("")
            #expect(
                BlockingWork.startThread {
                    thread.withLock { $0 = thisThread() }
                    ran.signal()
                })
            ran.wait()
            threads.insert(thread.withLock { $0 })
        }
        // One thread would do; a body handed out just before the last one's thread was waiting again
        // starts another, which then waits too.
        #expect(threads.count <= 10, "20 bodies ran on \(threads.count) threads")
    }

    /// A waiting thread is handed a body only when no other body runs on it: a body that blocks never
    /// holds up the next, which here is the one that lets it go.
    @Test func aBodyThatBlocksNeverHoldsUpTheNext() {
        let blocked = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        for _ in 0..<3 {  // spare threads to hand the bodies to
            let ran = DispatchSemaphore(value: 0)
            #expect(BlockingWork.startThread { ran.signal() })
            ran.wait()
        }
        #expect(
            BlockingWork.startThread {
                blocked.wait()
                released.signal()
            })
        #expect(BlockingWork.startThread { blocked.signal() })
        #expect(released.wait(timeout: .now() + 60) == .success, "the second body never ran beside the first")
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
