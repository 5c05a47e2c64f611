import Glibc

/// What a child of Latchkey's starts with, whichever thread starts it: no signal blocked, every
/// signal's default action. A thread's mask is its creator's, and Latchkey's threads are reused
/// across work (BlockingWork's spare threads), so without this a child's mask (`SIGTERM` blocked,
/// say) would depend on which thread happened to spawn it.
public func withCleanSpawnAttributes<T>(flags: Int32 = 0, _ body: (UnsafePointer<posix_spawnattr_t>) -> T) -> T {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var none = sigset_t()
    sigemptyset(&none)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &none)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(flags | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    return body(&attributes)
}

/// A pipe whose ends are close-on-exec from the start (no other thread's child inherits them);
/// the Glibc module does not import it.
@_silgen_name("pipe2")
public func pipeClosedOnExec(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32

/// glibc ≥ 2.34's way of closing every descriptor from one on in the child; the Glibc module does not import it.
@_silgen_name("posix_spawn_file_actions_addclosefrom_np")
public func spawnActionsCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32
