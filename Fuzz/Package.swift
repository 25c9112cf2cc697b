// swift-tools-version:6.1
import PackageDescription

// StoreGate's libFuzzer targets: a package of its own, so that `swift build` / `swift test` of
// StoreGate never see them. Build and run them with Scripts/fuzz.sh (see
// docs/fuzzing.md), which passes `-sanitize=fuzzer,address` and uses its own scratch path.

/// A StoreGate module, from the package one directory up.
func storeGate(_ module: String) -> Target.Dependency {
    .product(name: module, package: "StoreGate")
}

let settings: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// One fuzz target: an executable whose `main` hands its body to libFuzzer.
func fuzzer(_ name: String, _ modules: [String], support: [Target.Dependency] = [], crypto: Bool = false, logging: Bool = false) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport"] + support + modules.map(storeGate)
            + (crypto ? [.product(name: "Crypto", package: "swift-crypto")] : [])
            + (logging ? [.product(name: "Logging", package: "swift-log")] : []),
        swiftSettings: settings
    )
}

let package = Package(
    name: "StoreGateFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "StoreGate", path: ".."),
        // The same range as StoreGate's: keys for the stored-proof and Server API targets.
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        // The App Store clients take the caller's logger (a silent one here).
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer", storeGate("StoreGateCore")], swiftSettings: settings),
        // The Server API targets' clients over a transport that answers the input; apart from
        // FuzzSupport, so that the fuzzers reading no HTTP answer link no client.
        .target(
            name: "ServerAPIFuzzing",
            dependencies: [
                "FuzzSupport", storeGate("StoreGateCore"), storeGate("StoreGateSignedData"), storeGate("StoreGateAppStoreClient"),
                storeGate("StoreGateHTTP"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings
        ),

        fuzzer("fuzz-pkcs7", ["StoreGateReceipt"]),
        fuzzer("fuzz-receipt-payload", ["StoreGateReceipt"]),
        fuzzer("fuzz-receipt-verify", ["StoreGateCore", "StoreGateReceipt"]),
        fuzzer("fuzz-jws-structure", ["StoreGateCore", "StoreGateSignedData"]),
        fuzzer("fuzz-jws-verify", ["StoreGateCore", "StoreGateSignedData"]),
        fuzzer("fuzz-request-json", ["StoreGateServer"]),
        fuzzer("fuzz-verifyreceipt-reply", ["StoreGateCore", "StoreGateReceipt", "StoreGateAppStoreClient", "StoreGateHTTP"], logging: true),
        fuzzer("fuzz-server-api", ["StoreGateCore", "StoreGateSignedData", "StoreGateAppStoreClient"], support: ["ServerAPIFuzzing"]),
        fuzzer("fuzz-server-api-actions", ["StoreGateCore", "StoreGateSignedData", "StoreGateAppStoreClient"], support: ["ServerAPIFuzzing"]),
        fuzzer("fuzz-trust-file", ["StoreGateCore"]),
        fuzzer("fuzz-stored-proof", ["StoreGateLedger"], crypto: true),
        fuzzer("fuzz-rollup-changes", ["StoreGateLedger"]),

        // Not a fuzzer: writes the committed seed corpora and test CA roots (Scripts/fuzz.sh seeds).
        .executableTarget(
            name: "fuzz-seeds",
            dependencies: [
                "FuzzSupport",
                storeGate("StoreGateCore"), storeGate("StoreGateReceipt"), storeGate("StoreGateLedger"),
                storeGate("StoreGateTestSupport"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings
        ),
    ]
)
