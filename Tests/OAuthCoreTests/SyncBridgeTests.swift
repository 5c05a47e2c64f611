import Foundation
import Testing

@testable import OAuthCore

/// The one sync-to-async bridge: a thread waits for async work.
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
}
