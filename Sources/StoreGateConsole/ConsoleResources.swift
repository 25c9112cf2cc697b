import Foundation
import Mustache
import StoreGateCore

/// The console's files: its Mustache templates (`Resources/templates`) and its stylesheet and
/// script (`Resources/assets`, served from `/console/assets/`), read once from the target's
/// resource bundle when the console is built.
///
/// All or nothing: unless every file was read from the one installed bundle and every template
/// parsed, ``library`` is `nil`, no asset is kept, and ``problems`` says why; the console then
/// answers every route with 503 rather than draw a page from some of its parts.
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

    /// The bundle SwiftPM builds beside the binary.
    static let bundle = ResourceBundle(name: "StoreGate_StoreGateConsole.resources")

    /// The files of the installed bundle, read once per process.
    static let shared = ConsoleResources(bundle: bundle)

    /// Where the files were looked for.
    let bundle: ResourceBundle
    /// The compiled templates; `nil` unless every file was read and every template parsed.
    let library: MustacheLibrary?
    /// The assets' bytes by file name; empty unless ``library`` is there.
    let assets: [String: [UInt8]]
    /// Why the console cannot draw its pages (the bundle not found, a file missing, a template
    /// that does not parse); empty when it can.
    let problems: [String]

    /// Reads and compiles the files of `bundle`.
    ///
    /// - Parameter bundle: Where the files are.
    init(bundle: ResourceBundle) {
        self.bundle = bundle
        guard bundle.folder != nil else {
            self.library = nil
            self.assets = [:]
            self.problems = ["\(bundle.name) is not in \(bundle.searchFolders.map(\.path).joined(separator: " or "))"]
            return
        }
        var problems: [String] = []
        var templates: [String: MustacheTemplate] = [:]
        for name in Self.templateNames {
            let path = "templates/\(name).mustache"
            guard let bytes = bundle.contents(of: path) else {
                problems.append("\(path) is missing")
                continue
            }
            // The files end with a newline the templates do not have.
            var text = String(decoding: bytes, as: UTF8.self)
            if text.hasSuffix("\n") { text.removeLast() }
            do {
                templates[name] = try MustacheTemplate(string: text)
            } catch {
                problems.append("\(path) does not parse: \(error)")
            }
        }
        var assets: [String: [UInt8]] = [:]
        for name in Self.assetNames {
            guard let bytes = bundle.contents(of: "assets/\(name)") else {
                problems.append("assets/\(name) is missing")
                continue
            }
            assets[name] = bytes
        }
        if let folder = bundle.folder, !problems.isEmpty {
            problems = problems.map { "\(folder.path): \($0)" }
        }
        self.library = problems.isEmpty ? MustacheLibrary(templates: templates) : nil
        self.assets = problems.isEmpty ? assets : [:]
        self.problems = problems
    }

    /// The page `template` draws for `view`, or `nil` when the files are not all there.
    ///
    /// - Parameters:
    ///   - view: The page's values.
    ///   - template: The template's name (``templateNames``).
    /// - Returns: The HTML.
    func render(_ view: Any, template: String) -> String? {
        library?.render(view, withTemplate: template)
    }
}
