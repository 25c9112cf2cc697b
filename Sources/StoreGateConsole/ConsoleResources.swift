import Foundation
import Mustache
import StoreGateCore

/// The console's files: its Mustache templates (`Resources/templates`) and its stylesheet and
/// script (`Resources/assets`, served from `/console/assets/`), read once from the target's
/// resource bundle when the console is built.
///
/// Every `{{value}}` in a template is HTML-escaped by Mustache; the one triple-mustache insert
/// is a chart's SVG (``ConsoleViews/chart(title:values:tone:summary:)``, numbers and escaped
/// labels only). No inline script or style: the Content-Security-Policy forbids both.
struct ConsoleResources: Sendable {
    /// The templates, by name (`signin` is `templates/signin.mustache`); `{{> header}}` and
    /// `{{> footer}}` frame every page.
    static let templateNames = [
        "header", "footer", "signin", "overview", "drilldown", "search", "account", "transaction", "inspect", "inspection", "system", "error", "secret",
    ]

    /// The stylesheet and the script, by file name.
    static let assetNames = ["console.css", "console.js"]

    /// The files, read once per process.
    static let shared = ConsoleResources()

    static let bundle = ResourceBundle(
        name: "StoreGate_StoreGateConsole.resources",
        sourceFolder: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Resources")
    )

    /// The compiled templates; empty when the bundle is missing.
    let library: MustacheLibrary
    /// The assets' bytes by file name.
    let assets: [String: [UInt8]]
    /// The files that could not be read (the bundle not installed beside the binary).
    let missing: [String]

    /// Reads and compiles the files.
    ///
    /// A template that does not parse is a programming error the console tests catch; a
    /// missing file is named in ``missing`` (the pages then answer 503).
    init() {
        var missing: [String] = []
        var templates: [String: MustacheTemplate] = [:]
        for name in Self.templateNames {
            guard let bytes = Self.bundle.contents(of: "templates/\(name).mustache") else {
                missing.append("templates/\(name).mustache")
                continue
            }
            // The files end with a newline the templates do not have.
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            do { templates[name] = try MustacheTemplate(string: text) } catch { preconditionFailure("console template \(name): \(error)") }
        }
        var assets: [String: [UInt8]] = [:]
        for name in Self.assetNames {
            guard let bytes = Self.bundle.contents(of: "assets/\(name)") else {
                missing.append("assets/\(name)")
                continue
            }
            assets[name] = bytes
        }
        self.library = MustacheLibrary(templates: templates)
        self.assets = assets
        self.missing = missing
    }
}
