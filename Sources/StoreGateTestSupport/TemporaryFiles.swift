public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Folders for the files a test writes (ledger files, trust folders, request bodies), all
/// inside one folder of the test process that is removed when the process exits: a test run
/// leaves nothing behind in the system's temporary folder, whether its tests pass or fail.
///
/// A process that crashes or is killed keeps its folder (`storegate-tests-<pid>-…`), which is
/// then what there is to look at.
public enum TemporaryFiles {
    /// A new empty folder named `<prefix>-<UUID>`.
    ///
    /// - Throws: the file system's error when the folder cannot be created.
    public static func directory(_ prefix: String) throws -> URL {
        let directory = try root.get().appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A new file named `name` holding `bytes`, alone in a new folder.
    ///
    /// - Throws: the file system's error when it cannot be written.
    public static func file(_ bytes: some Sequence<UInt8>, name: String, prefix: String = "file") throws -> URL {
        let url = try directory(prefix).appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// This process's folder, created on first use; removed at exit.
    private static let root: Result<URL, any Error> = Result {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("storegate-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit {
            if case .success(let url) = TemporaryFiles.root { try? FileManager.default.removeItem(at: url) }  // best effort at exit
        }
        return url
    }
}
