import Foundation
import OAuthCore
import TestSupport
import Testing

/// A child's end is an event: a task that waits for it and is not scheduled again until
/// long after its deadline (a loaded machine, every thread of the cooperative pool busy)
/// still hears that the child ended, never that it hangs.
@Suite struct SpawnedTests {
    /// A program just copied is "busy" while some other child, forked but not yet exec'd, holds the
    /// copy's descriptor: here a descriptor held open for writing a moment longer. Started all the
    /// same once it is let go (a soak run once lost CallerTests' copied git to ETXTBSY).
    @Test func aCopyStillHeldForWritingIsStartedOnceLetGo() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("busy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let copy = folder.appendingPathComponent("true").path
        try copyExecutable("/bin/true", to: copy)
        let holder = open(copy, O_WRONLY | O_CLOEXEC)
        try #require(holder >= 0)
        // Let go on a thread of its own, never the cooperative pool (busy, or starved beside a CPU hog).
        let letGo = ThreadSignal()
        #expect(
            BlockingWork.startThread {
                usleep(100_000)
                close(holder)
                letGo.signal()
            })
        let started = await BlockingWork.run { Result { try Spawned(copy, []) } }
        await BlockingWork.run { _ = letGo.wait() }
        let child = try started.get()
        #expect(await BlockingWork.run { child.wait(timeout: 60) } == 0)
    }

    @Test func aWaitStarvedPastItsDeadlineStillHearsTheChildEnded() async throws {
        let input = Pipe().closedOnExec()
        // cat ends when its input does: when this test says so, not when a clock does.
        let child = try Spawned("/bin/cat", [], input: input.fileHandleForReading.fileDescriptor)
        let timeout: TimeInterval = 3
        // The waiting task runs on an executor of the test's own, which stops running it at will:
        // a starved pool, without starving the pool the other tests run on.
        let executor = HeldExecutor()
        defer { executor.finish() }
        let started = Locked<Date?>(nil)
        let waiter = Task.detached(executorPreference: executor) {
            started.set(Date())
            return await child.exit(timeout: timeout)
        }
        let answer = await BlockingWork.run { () -> Int32?? in
            // Once the waiter has suspended in its wait, nothing of it runs until released.
            while started.get() == nil { usleep(1000) }
            executor.hold()
            // The child ends well before the deadline, seen by a blocking wait on this thread.
            try? input.fileHandleForWriting.close()
            guard child.wait(timeout: 60) != nil, Date() < started.get()!.addingTimeInterval(timeout) else { return .none }
            // The deadline passes while the waiter cannot run.
            while Date() < started.get()!.addingTimeInterval(timeout + 0.5) { usleep(50_000) }
            executor.release()
            return .some(nil)
        }
        try #require(answer != nil, "cat took longer than the whole timeout to end: this run proves nothing")
        let heard = await waiter.value
        #expect(heard == 0, "the child ended before the deadline; the wait said \(String(describing: heard))")
    }

    @Test func aChildThatOutlivesTheDeadlineIsSaidToRunAndEndEndsIt() async throws {
        let child = try Spawned("/bin/sleep", ["600"])
        #expect(await child.exit(timeout: 0.2) == nil)
        #expect(child.isRunning)
        await child.end()
        #expect(child.poll() == 128 + SIGKILL)
    }

    @Test func runReturnsTheStatusAndTheOutput() async throws {
        let (status, output) = try await Spawned.run("/bin/sh", ["-c", "echo spoken; exit 3"])
        #expect(status == 3)
        #expect(String(decoding: output, as: UTF8.self) == "spoken\n")
    }
}

/// A task executor on a thread of its own that can be told to stop running jobs (each job
/// already running finishes first) and to start again.
private final class HeldExecutor: TaskExecutor, @unchecked Sendable {
    // Guarded by `condition`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var held = false
    private var running = false
    private var finished = false

    init() {
        Thread.detachNewThread { [self] in loop() }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.withLock {
            jobs.append(job)
            condition.broadcast()
        }
    }

    private func loop() {
        while true {
            condition.lock()
            while !finished && (held || jobs.isEmpty) { condition.wait() }
            if finished && jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            running = true
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            condition.withLock {
                running = false
                condition.broadcast()
            }
        }
    }

    /// Runs no further job; returns once the one running, if any, has.
    func hold() {
        condition.withLock {
            held = true
            while running { condition.wait() }
        }
    }

    func release() {
        condition.withLock {
            held = false
            condition.broadcast()
        }
    }

    /// Runs what is left, then lets the thread go.
    func finish() {
        condition.withLock { finished = true }
        release()
    }
}

/// A value shared between threads.
private final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
