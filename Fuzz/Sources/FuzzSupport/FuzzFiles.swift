import Foundation
import StoreGateCore

/// Where the fuzz targets find their committed test-CA material and the real Apple fixtures.
///
/// `STOREGATE_FUZZ_DIR` names the `Fuzz/` directory (`Scripts/fuzz.sh` sets it); without it,
/// the directory this file was compiled from is used. `STOREGATE_FIXTURES_DIR` names the real
/// fixtures (default `../shared/fixtures` beside the repository); they are read in place and
/// are optional.
public enum FuzzFiles {
    /// The `Fuzz/` directory.
    public static let fuzzDirectory: URL = {
        if let path = ProcessInfo.processInfo.environment["STOREGATE_FUZZ_DIR"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        // Fuzz/Sources/FuzzSupport/FuzzFiles.swift
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }()

    /// The real Apple fixtures, when present.
    public static let fixturesDirectory: URL? = {
        let url: URL
        if let path = ProcessInfo.processInfo.environment["STOREGATE_FIXTURES_DIR"], !path.isEmpty {
            url = URL(fileURLWithPath: path)
        } else {
            url = fuzzDirectory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/fixtures")
        }
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue ? url : nil
    }()

    /// Every regular file directly in `directory` whose name ends in one of `extensions`
    /// (any name when empty), sorted by name; none when the directory is absent.
    public static func files(in directory: URL, extensions: [String] = []) -> [(name: String, bytes: [UInt8])] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        } catch {
            return []
        }
        var result: [(name: String, bytes: [UInt8])] = []
        for name in names where extensions.isEmpty || extensions.contains(where: { name.hasSuffix($0) }) {
            guard !name.hasPrefix("."), let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                continue
            }
            result.append((name, Array(data)))
        }
        return result
    }

    /// The committed seed corpus of a target (`Fuzz/Corpus/<target>/`).
    public static func corpus(_ target: String) -> [(name: String, bytes: [UInt8])] {
        files(in: fuzzDirectory.appendingPathComponent("Corpus").appendingPathComponent(target))
    }

    /// Real fixtures in `fixtures/<subdirectory>`, when present.
    public static func fixtures(_ subdirectory: String, extensions: [String] = []) -> [(name: String, bytes: [UInt8])] {
        guard let fixturesDirectory else { return [] }
        return files(in: fixturesDirectory.appendingPathComponent(subdirectory), extensions: extensions)
    }

    /// A trust store with the committed test CA roots (`Fuzz/TestCA/*.der`) as opt-in anchors,
    /// so minted proofs verify and mutated ones go as deep as the chain step.
    public static func testTrustStore() -> TrustStore {
        var store = TrustStore()
        let roots = files(in: fuzzDirectory.appendingPathComponent("TestCA"), extensions: [".der"])
        guard !roots.isEmpty else {
            FuzzTarget.fail("no test CA roots in \(fuzzDirectory.path)/TestCA: run Scripts/fuzz.sh seeds")
        }
        for root in roots {
            do {
                try store.addOptInAnchor(der: root.bytes)
            } catch {
                FuzzTarget.fail("TestCA/\(root.name) is not a certificate: \(error)")
            }
        }
        return store
    }
}
