import Foundation

/// The service's OpenAPI 3.1 document (`Resources/openapi.yaml`), served at `GET /openapi.yaml`.
public enum OpenAPIDocument {
    /// The resource bundle SwiftPM builds beside the binary.
    static let bundleName = "StoreGate_StoreGateServer.resources"

    /// The document's bytes, or `nil` when the resource bundle is not installed.
    ///
    /// Looked up beside the executable (where SwiftPM puts resource bundles) and in the source
    /// tree this binary was built from, without `Bundle.module`, whose accessor stops the
    /// process when the bundle is missing.
    public static func load() -> [UInt8]? {
        var candidates: [URL] = []
        let main = Bundle.main.bundleURL
        candidates.append(main.appendingPathComponent(bundleName).appendingPathComponent("openapi.yaml"))
        if let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().deletingLastPathComponent() {
            candidates.append(executable.appendingPathComponent(bundleName).appendingPathComponent("openapi.yaml"))
        }
        candidates.append(
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Resources").appendingPathComponent("openapi.yaml")
        )
        for candidate in candidates {
            if let data = FileManager.default.contents(atPath: candidate.path) {
                return Array(data)
            }
        }
        return nil
    }
}
