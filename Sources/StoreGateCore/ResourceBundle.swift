public import Foundation

/// A target's resource bundle, the folder SwiftPM builds beside the binary
/// (`<package>_<target>.resources`), read without `Bundle.module`, whose accessor stops the
/// process when the bundle is missing.
///
/// The folder is looked for beside the running binary only, never in the source tree it was
/// built from: a deployed binary reads the files installed with it or none, so a folder left
/// behind shows up wherever the binary runs, not only on another machine.
public struct ResourceBundle: Sendable {
    /// The bundle's folder name: `StoreGate_StoreGateConsole.resources`.
    public let name: String
    /// The folders looked in for ``name``, in order.
    public let searchFolders: [URL]

    /// A bundle by its folder name, looked for beside the running binary: the main bundle's
    /// folder, then the executable's (symlinks resolved).
    ///
    /// - Parameter name: The bundle's folder name.
    public init(name: String) {
        var folders = [Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent(),
           executable.standardizedFileURL != Bundle.main.bundleURL.standardizedFileURL {
            folders.append(executable)
        }
        self.init(name: name, searchFolders: folders)
    }

    /// A bundle by its folder name, looked for in the given folders.
    ///
    /// - Parameters:
    ///   - name: The bundle's folder name.
    ///   - searchFolders: The folders that may hold it, in order.
    public init(name: String, searchFolders: [URL]) {
        self.name = name
        self.searchFolders = searchFolders
    }

    /// The places the bundle may be (each search folder with ``name`` appended), in order.
    public var candidates: [URL] { searchFolders.map { $0.appendingPathComponent(name, isDirectory: true) } }

    /// The first of ``candidates`` that is a folder, or `nil` when the bundle is not installed.
    ///
    /// Every file is read from this one folder: a bundle is never put together from two.
    public var folder: URL? {
        candidates.first { candidate in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: candidate.path, isDirectory: &isDirectory) && isDirectory.boolValue
        }
    }

    /// The bytes of the resource at `path` (relative to the bundle: `assets/console.css`) in
    /// ``folder``, or `nil` when the bundle or the file is missing.
    ///
    /// - Parameter path: The resource's path inside the bundle.
    /// - Returns: Its bytes, or `nil`.
    public func contents(of path: String) -> [UInt8]? {
        guard let folder else { return nil }
        return FileManager.default.contents(atPath: folder.appendingPathComponent(path).path).map(Array.init)
    }
}
