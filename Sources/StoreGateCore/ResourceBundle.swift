public import Foundation

/// A target's resource bundle, the folder SwiftPM builds beside the binary
/// (`<package>_<target>.resources`), read without `Bundle.module`, whose accessor stops the
/// process when the bundle is missing.
public struct ResourceBundle: Sendable {
    /// The bundle's folder name: `StoreGate_StoreGateConsole.resources`.
    public let name: String
    /// The target's source folder holding the same files (`Sources/<target>/Resources`), for a
    /// binary run where it was built but its bundle was not copied along.
    public let sourceFolder: URL

    /// A bundle by its name and the source folder of its files.
    ///
    /// - Parameters:
    ///   - name: The bundle's folder name.
    ///   - sourceFolder: The folder in the source tree that SwiftPM copies into the bundle.
    public init(name: String, sourceFolder: URL) {
        self.name = name
        self.sourceFolder = sourceFolder
    }

    /// The bytes of the resource at `path` (relative to the bundle: `assets/console.css`), or
    /// `nil` when no candidate holds it.
    ///
    /// Looked up beside the main bundle, beside the executable (symlinks resolved), then in the
    /// source folder.
    ///
    /// - Parameter path: The resource's path inside the bundle.
    /// - Returns: Its bytes, or `nil`.
    public func contents(of path: String) -> [UInt8]? {
        var candidates: [URL] = [Bundle.main.bundleURL.appendingPathComponent(name).appendingPathComponent(path)]
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() {
            candidates.append(executable.appendingPathComponent(name).appendingPathComponent(path))
        }
        candidates.append(sourceFolder.appendingPathComponent(path))
        for candidate in candidates {
            if let data = FileManager.default.contents(atPath: candidate.path) {
                return Array(data)
            }
        }
        return nil
    }
}
