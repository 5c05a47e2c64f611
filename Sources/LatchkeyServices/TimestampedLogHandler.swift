import FoundationEssentials
import Glibc
import LatchkeyCore
import Logging

/// One line per event on stderr, timed to the millisecond (the benchmarks read
/// these times). OAuthCore and the app put no secret in any message.
public struct TimestampedLogHandler: LogHandler {
    public let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]

    public init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let (level, message) = (event.level, event.message)
        let all = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let details =
            all.isEmpty
            ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\(LogLine.escaped("\($0.value)"))" }.joined(separator: " ")
        let milliseconds = String(time.tv_nsec / 1_000_000)
        let stamp = "\(time.tv_sec)." + String(repeating: "0", count: 3 - milliseconds.count) + milliseconds
        let line = "\(stamp) \(level) \(label): \(LogLine.escaped("\(message)"))\(details)\n"
        Descriptor.standardError.write(line)
    }
}
