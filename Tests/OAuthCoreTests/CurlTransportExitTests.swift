import Foundation
import TestSupport
import Testing

/// A process that ends (the app whose window closes, the agent on SIGTERM) first calls
/// CurlTransport.endAll: a request under way stops, one sent afterwards is refused, and
/// nothing of libcurl's is left running beneath exit's clean-up. endAll is for good, so
/// it runs in a process of its own, latchkey-exit-race.
@Suite struct CurlTransportExitTests {
    @Test func endingStopsTheRequestUnderWayAndRefusesTheNext() async throws {
        let helper = RunningSandbox.binDirectory.appendingPathComponent("latchkey-exit-race")
        try #require(FileManager.default.isExecutableFile(atPath: helper.path), "latchkey-exit-race is not built")
        // The request under way has 600 s to run; only endAll can end it sooner than the 60 s waited here.
        let (status, output) = try await Spawned.run(helper.path, [], timeout: 60)
        #expect(status == 0)
        #expect(
            String(decoding: output, as: UTF8.self).split(separator: "\n") == [
                "the request under way: cancelled",
                #"a request after: other("The program is ending; the request was not sent.")"#,
            ])
    }
}
