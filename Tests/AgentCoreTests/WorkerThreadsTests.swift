import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AgentCore

@Suite struct WorkerThreadsTests {
    @Test func aSteadyStreamReusesItsThreads() async throws {
        let workers = WorkerThreads(most: 8)
        let threads = Mutex<Set<UInt>>([])
        for _ in 0..<200 {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                #expect(
                    workers.run {
                        threads.withLock { _ = $0.insert(UInt(bitPattern: Int(bitPattern: pthread_self()))) }
                        done.resume()
                    })
            }
            // The next caller comes once the thread has gone back to waiting (on a loaded machine
            // that can take a while after the job's end, and a caller sooner starts a second thread).
            try await waitUntil { workers.idleThreads > 0 }
        }
        #expect(threads.withLock { $0.count } == 1, "one after another, each on the thread that came idle: not 200")
    }

    @Test func atMostMostRunAtOnceAndTheRestAreRefused() async throws {
        let workers = WorkerThreads(most: 3)
        let gate = DispatchSemaphore(value: 0)
        let started = Mutex(0)
        for _ in 0..<3 {
            #expect(
                workers.run {
                    started.withLock { $0 += 1 }
                    gate.wait()
                })
        }
        #expect(!workers.run {}, "a fourth while three wait is refused, not queued behind them")
        for _ in 0..<3 { gate.signal() }
        while started.withLock({ $0 }) < 3 { try await Task.sleep(for: .milliseconds(5)) }
        // Free again: taken.
        let ran = Mutex(false)
        var accepted = false
        for _ in 0..<200 where !accepted {
            accepted = workers.run { ran.withLock { $0 = true } }
            if !accepted { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(accepted)
        while !ran.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
    }
}
