import Foundation
import Testing

@testable import OAuthCore

/// The one sync-to-async bridge: a thread waits for async work, and for a descriptor beside it.
/// Each test waits on a thread of its own (BlockingWork.run), as the bridge's callers do: a wait on
/// one of Swift's few pool threads would starve the very work it waits for.
@Suite struct SyncBridgeTests {
    @Test func aThreadGetsTheWorksResult() async {
        let answer = await BlockingWork.run {
            SyncBridge.wait {
                await Task.yield()
                return 42
            }
        }
        #expect(answer == 42)
    }

    /// A descriptor watched while the work is under way is reported as soon as it is hung up on,
    /// with the work still running; the work's result comes after, once it ends.
    @Test func aHangUpIsReportedWhileTheWorkRuns() async throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        let (mine, theirs) = (pair[0], pair[1])
        defer { close(mine) }
        let release = ThreadSignal()
        let pending = SyncBridge.start { () async -> String in
            await BlockingWork.run { _ = release.wait() }
            return "answered"
        }
        close(theirs)
        let first = await BlockingWork.run { pending.wait(watching: mine, until: .now() + 60) }
        release.signal()
        guard case .descriptor(let revents) = first else {
            Issue.record("the hang-up was not reported while the work ran: \(first)")
            return
        }
        #expect(revents & Int16(POLLHUP) != 0)
        let then = await BlockingWork.run { pending.wait(until: .now() + 60) }
        guard case .finished(let answer) = then else {
            Issue.record("the work's result did not come: \(then)")
            return
        }
        #expect(answer == "answered")
    }

    @Test func aDeadlineThatPassesIsSaid() async {
        let release = ThreadSignal()
        let pending = SyncBridge.start { await BlockingWork.run { _ = release.wait() } }
        let before = DispatchTime.now()
        let outcome = await BlockingWork.run { pending.wait(until: before + .milliseconds(50)) }
        let waited = DispatchTime.now().uptimeNanoseconds - before.uptimeNanoseconds
        release.signal()
        guard case .timedOut = outcome else {
            Issue.record("no time-out: \(outcome)")
            return
        }
        #expect(waited >= 50_000_000, "not before the deadline")
        _ = await BlockingWork.run { pending.result() }
    }
}
