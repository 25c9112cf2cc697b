public import Foundation

/// Locates the real Apple-signed fixtures in `../shared/fixtures`, beside the package.
///
/// They are never copied into the repository. Tests that need them call ``directory`` and
/// skip with ``missingMessage`` when it is `nil`. `STOREGATE_FIXTURES` overrides the location;
/// `STOREGATE_FIXTURES=none` hides them, so the suite runs as it does in a clone that has no
/// `../shared` beside it (CI runs one of its suites that way).
public enum Fixtures {
    /// The package root, derived from this file's path at build time.
    public static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // StoreGateTestSupport
        .deletingLastPathComponent()  // Sources
        .deletingLastPathComponent()  // package root

    /// The fixtures folder, or `nil` when it is absent.
    public static let directory: URL? = locate(setting: ProcessInfo.processInfo.environment["STOREGATE_FIXTURES"])

    /// Whether `STOREGATE_FIXTURES=none` hides the fixtures.
    public static var isHidden: Bool {
        ProcessInfo.processInfo.environment["STOREGATE_FIXTURES"]?.lowercased() == "none"
    }

    /// The fixtures folder for a `STOREGATE_FIXTURES` value: `none` hides them; a path is tried
    /// first, then `../shared/fixtures` beside the package.
    static func locate(setting: String?) -> URL? {
        if setting?.lowercased() == "none" { return nil }
        let candidates = [
            setting.flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) },
            packageRoot.deletingLastPathComponent().appendingPathComponent("shared/fixtures"),
        ].compactMap { $0 }
        return candidates.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("PROVENANCE.md").path) }
    }

    /// Why a fixture-based test did not run.
    public static var missingMessage: String {
        isHidden
            ? "STOREGATE_FIXTURES=none hides ../shared/fixtures: skipping tests on real Apple-signed proofs"
            : "../shared/fixtures is absent (set STOREGATE_FIXTURES to its path): skipping tests on real Apple-signed proofs"
    }

    /// The URL of a fixture, e.g. `url("receipts/kvitto-ios-sandbox-2015-05-23-sha1-1iap.der")`.
    public static func url(_ relativePath: String) -> URL? {
        directory?.appendingPathComponent(relativePath)
    }

    /// The bytes of a fixture, or `nil` when the fixtures are absent.
    public static func bytes(_ relativePath: String) -> [UInt8]? {
        guard let url = url(relativePath), let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return Array(data)
    }

    /// The files of a fixtures subfolder with the given extension, sorted by name.
    public static func files(in subfolder: String, withExtension ext: String) -> [URL] {
        guard let folder = directory?.appendingPathComponent(subfolder),
              let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { return [] }
        return names.filter { $0.hasSuffix(".\(ext)") }.sorted().map { folder.appendingPathComponent($0) }
    }
}
