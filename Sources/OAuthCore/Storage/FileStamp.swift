import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#endif

/// What `stat` says of a file that changes whenever it is replaced or written.
package struct FileStamp: Hashable, Sendable {
    package let device: UInt64
    package let inode: UInt64
    package let size: Int64
    package let modified: Int
    package let modifiedNanoseconds: Int

    package init?(of path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
    }
}
