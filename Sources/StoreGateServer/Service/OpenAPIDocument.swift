import Foundation
import StoreGateCore

/// The service's OpenAPI 3.1 document (`Resources/openapi.yaml`), served at `GET /openapi.yaml`.
public enum OpenAPIDocument {
    /// The resource bundle SwiftPM builds beside the binary.
    static let bundle = ResourceBundle(name: "StoreGate_StoreGateServer.resources")

    /// The document's bytes, or `nil` when the resource bundle is not installed.
    ///
    /// Looked up beside the executable, where SwiftPM puts resource bundles (``ResourceBundle``).
    public static func load() -> [UInt8]? {
        bundle.contents(of: "openapi.yaml")
    }
}
