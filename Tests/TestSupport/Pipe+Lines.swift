import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension Pipe {
    /// Marks both ends close-on-exec at once, so children spawned by other tests in
    /// the meantime do not inherit them (the child that is meant to gets its end
    /// through dup2, which clears the flag on the copy).
    public func closedOnExec() -> Pipe {
        for fd in [fileHandleForReading.fileDescriptor, fileHandleForWriting.fileDescriptor] {
            _ = fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC)
        }
        return self
    }

    /// The first line the other side writes, waiting at most `timeout`; nil when it
    /// ended, closed its end or went quiet first. Never waits for end-of-file, which a
    /// leaked write end could hold off for good.
    public func firstLine(within timeout: TimeInterval, while process: Spawned) -> String? {
        let fd = fileHandleForReading.fileDescriptor
        var line = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(timeout)
        while !line.contains(UInt8(ascii: "\n")) {
            guard Date() < deadline else { return nil }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 50)
            if ready == 0 {
                // Nothing yet: give up only once the process has ended.
                if !process.isRunning { return nil }
                continue
            }
            if ready < 0 { if errno == EINTR { continue } else { return nil } }
            let count = read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            if count <= 0 { return nil }
            line += buffer[0..<count]
        }
        return String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }
}
