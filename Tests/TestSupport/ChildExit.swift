import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Waits for a child process to end without trusting Foundation to notice.
///
/// On Linux, Foundation's `Process` learns of an exit from SIGCHLD; a child that
/// ends very quickly (a sandbox refusing its options) is sometimes never seen:
/// it stays a zombie, `waitUntilExit()` blocks its thread for good and a
/// `terminationHandler` never runs. With two such waits on a 2-core machine the
/// whole cooperative pool was blocked and `swift test` hung (seen locally, about
/// one run in six). So: ask Foundation, and reap the child ourselves if it has not.
public enum ChildExit {
    /// The exit status once the child has ended; nil while it runs.
    public static func poll(_ process: Process) -> Int32? {
        if !process.isRunning { return process.terminationStatus }
        var status: Int32 = 0
        let result = waitpid(process.processIdentifier, &status, WNOHANG)
        if result == process.processIdentifier {
            // WIFEXITED ? WEXITSTATUS : 128 + WTERMSIG
            return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        }
        if result == -1, errno == ECHILD {
            // Foundation reaped it between our two questions; its answer is on the way.
            return process.isRunning ? nil : process.terminationStatus
        }
        return nil
    }

    /// Blocks the calling thread until the child ends or `timeout` passes.
    @discardableResult
    public static func wait(for process: Process, timeout: TimeInterval) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let status = poll(process) { return status }
            usleep(5_000)
        } while Date() < deadline
        return nil
    }

    /// Suspends the calling task until the child ends or `timeout` passes.
    public static func exit(of process: Process, timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let status = poll(process) { return status }
            try? await Task.sleep(for: .milliseconds(5))
        } while Date() < deadline
        return nil
    }
}

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
    public func firstLine(within timeout: TimeInterval, while process: Process) -> String? {
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
                if ChildExit.poll(process) != nil { return nil }
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
