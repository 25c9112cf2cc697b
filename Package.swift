// swift-tools-version:6.1
import PackageDescription

/// Settings every StoreGate target shares: Swift 6 language mode with strict concurrency;
/// imports are internal unless a file says `public import` (what a module's public API
/// exposes is declared, not leaked), and a member is visible only through a module the file
/// imports itself (every dependency named where it is used).
let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// Test targets: the release test run (`swift test -c release -Xswiftc -enable-testing`) is
/// there to run the libraries' code at -O (Swift 6.3 has miscompiled it, NOTES.md); the tests'
/// own code gains nothing from the optimizer, whose whole-module passes over the test modules
/// cost CI minutes. So tests compile at -Onone in every configuration; the code they call does not.
let testSwift: [SwiftSetting] = strictSwift + [.unsafeFlags(["-Onone"], .when(configuration: .release))]

let package = Package(
    name: "StoreGate",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StoreGateCore", targets: ["StoreGateCore"]),
        .library(name: "StoreGateReceipt", targets: ["StoreGateReceipt"]),
        .library(name: "StoreGateSignedData", targets: ["StoreGateSignedData"]),
        .library(name: "StoreGateHTTP", targets: ["StoreGateHTTP"]),
        .library(name: "StoreGateAppStoreClient", targets: ["StoreGateAppStoreClient"]),
        .library(name: "StoreGateOffers", targets: ["StoreGateOffers"]),
        .library(name: "StoreGateLedger", targets: ["StoreGateLedger"]),
        .library(name: "StoreGateLedgerSQLite", targets: ["StoreGateLedgerSQLite"]),
        .library(name: "StoreGateLedgerPostgres", targets: ["StoreGateLedgerPostgres"]),
        .library(name: "StoreGateLedgerMigration", targets: ["StoreGateLedgerMigration"]),
        .library(name: "StoreGateWorkers", targets: ["StoreGateWorkers"]),
        .library(name: "StoreGateEvents", targets: ["StoreGateEvents"]),
        .library(name: "StoreGateSync", targets: ["StoreGateSync"]),
        .library(name: "StoreGateConsole", targets: ["StoreGateConsole"]),
        .library(name: "StoreGateServer", targets: ["StoreGateServer"]),
        .library(name: "StoreGateTestSupport", targets: ["StoreGateTestSupport"]),
        .executable(name: "storegate", targets: ["StoreGateCLI"]),
        // Development tools (the tour's demo data, minted load-test receipts, the local Apple
        // stand-in, benchmarks, the ledger's multi-process stress helper): built on the test
        // CA, so they stay out of the shipped `storegate` binary.
        .executable(name: "storegate-dev", targets: ["StoreGateDevTools"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        // Already in the graph through async-http-client; named so the client can set TLS and read bytes.
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.81.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        // The console: its sessions (hummingbird-auth's session storage) and its pages (Mustache).
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        // Traces: spans around requests, verification, ledger writes, Apple calls and webhook
        // deliveries; exported over OTLP/HTTP only (gRPC left out so the build stays small).
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
    ],
    targets: [
        .target(
            name: "StoreGateCore",
            dependencies: [
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateReceipt",
            dependencies: [
                "StoreGateCore",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateSignedData",
            dependencies: [
                "StoreGateCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // Signing subscription offers (StoreKit 1 promotional offers, StoreKit 2 JWS): key
        // handling kept apart from the verifying modules, and free of NIO, so an app's own
        // server can embed it.
        .target(
            name: "StoreGateOffers",
            dependencies: [
                "StoreGateCore",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: strictSwift
        ),
        // The HTTP transport every outgoing call shares (the App Store clients, webhook
        // deliveries, the CLI's calls to a service): one attempt, strict TLS, no redirects, a
        // deadline, its own error type. Knows nothing of Apple or of webhooks.
        .target(
            name: "StoreGateHTTP",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateAppStoreClient",
            dependencies: [
                "StoreGateCore",
                "StoreGateHTTP",
                "StoreGateReceipt",
                "StoreGateSignedData",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateLedger",
            dependencies: [
                "StoreGateCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
            ],
            swiftSettings: strictSwift
        ),
        // SQLite 3.54.1's amalgamation (public domain; Sources/CSQLite/VERSION.md says where it
        // comes from), built with the options the ledger wants, and the one variadic call Swift
        // cannot make (sqlite3_config).
        .target(
            name: "CSQLite",
            exclude: ["VERSION.md"],
            cSettings: [
                .define("SQLITE_THREADSAFE", to: "2"),
                .define("SQLITE_DEFAULT_MEMSTATUS", to: "0"),
                .define("SQLITE_DEFAULT_WAL_SYNCHRONOUS", to: "1"),
                .define("SQLITE_DQS", to: "0"),
                .define("SQLITE_LIKE_DOESNT_MATCH_BLOBS"),
                .define("SQLITE_OMIT_DEPRECATED"),
                .define("SQLITE_OMIT_LOAD_EXTENSION"),
                .define("SQLITE_OMIT_SHARED_CACHE"),
                .define("SQLITE_OMIT_PROGRESS_CALLBACK"),
                .define("SQLITE_USE_ALLOCA"),
                .define("SQLITE_ENABLE_API_ARMOR", .when(configuration: .debug)),
            ]
        ),
        .target(
            name: "StoreGateLedgerSQLite",
            dependencies: [
                "CSQLite",
                "StoreGateCore",
                "StoreGateLedger",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateLedgerPostgres",
            dependencies: [
                "StoreGateCore",
                "StoreGateLedger",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        // `storegate migrate`: moves a whole ledger from SQLite to PostgreSQL (COPY, in key
        // order) and proves it with a row count and a digest per table on both sides. The one
        // module that sees both backends; the SQL of the copy lives here.
        .target(
            name: "StoreGateLedgerMigration",
            dependencies: [
                "StoreGateCore",
                "StoreGateLedger",
                "StoreGateLedgerSQLite",
                "StoreGateLedgerPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        // The one shape of every background worker: a round on a schedule, backoff after a
        // failure, the same metrics, a start gate (the ledger migrated) and a health registry.
        .target(
            name: "StoreGateWorkers",
            dependencies: [
                "StoreGateCore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateEvents",
            dependencies: [
                "StoreGateCore",
                "StoreGateLedger",
                "StoreGateHTTP",  // strict TLS, no redirects, a deadline per attempt
                "StoreGateWorkers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: strictSwift
        ),
        // Keeps the ledger true to Apple: missed notifications recovered from Get Notification
        // History, accounts refreshed from the transaction history.
        .target(
            name: "StoreGateSync",
            dependencies: [
                "StoreGateCore",
                "StoreGateLedger",
                "StoreGateAppStoreClient",
                "StoreGateSignedData",
                "StoreGateWorkers",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        // The web console: pages over a narrow read model (ConsoleReadModel) that the server
        // implements; its templates, stylesheet and script are resources, not Swift strings.
        .target(
            name: "StoreGateConsole",
            dependencies: [
                "StoreGateCore",
                "StoreGateLedger",
                "StoreGateReceipt",
                "StoreGateSignedData",
                "StoreGateEvents",
                "StoreGateSync",
                "StoreGateWorkers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: [.copy("Resources/assets"), .copy("Resources/templates")],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateServer",
            dependencies: [
                "StoreGateConsole",
                "StoreGateSync",
                "StoreGateCore",
                "StoreGateReceipt",
                "StoreGateSignedData",
                "StoreGateAppStoreClient",
                "StoreGateHTTP",
                "StoreGateLedger",
                "StoreGateLedgerSQLite",
                "StoreGateLedgerPostgres",
                "StoreGateEvents",
                "StoreGateWorkers",
                "StoreGateOffers",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: strictSwift
        ),
        .target(
            name: "StoreGateTestSupport",
            dependencies: [
                "StoreGateCore",
                "StoreGateReceipt",
                "StoreGateSignedData",
                "StoreGateAppStoreClient",
                "StoreGateHTTP",
                "StoreGateEvents",
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "StoreGateCLI",
            dependencies: [
                "StoreGateCore",
                "StoreGateOffers",
                "StoreGateEvents",
                "StoreGateReceipt",
                "StoreGateSignedData",
                "StoreGateAppStoreClient",
                "StoreGateHTTP",
                "StoreGateLedger",
                "StoreGateLedgerMigration",
                "StoreGateServer",
                "StoreGateSync",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSwift
        ),
        .executableTarget(
            name: "StoreGateDevTools",
            dependencies: [
                "StoreGateSync",
                "StoreGateCore",
                "StoreGateReceipt",
                "StoreGateSignedData",
                "StoreGateAppStoreClient",
                "StoreGateHTTP",
                "StoreGateLedger",
                "StoreGateLedgerSQLite",
                "StoreGateLedgerPostgres",
                "StoreGateEvents",
                "StoreGateServer",  // `bench console` drives the service's console over HTTP
                "StoreGateTestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSwift
        ),
        .testTarget(
            name: "StoreGateReceiptTests",
            dependencies: [
                "StoreGateCore", "StoreGateReceipt", "StoreGateTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateSignedDataTests",
            dependencies: [
                "StoreGateCore", "StoreGateSignedData", "StoreGateReceipt", "StoreGateTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateAppStoreClientTests",
            dependencies: [
                "StoreGateCore", "StoreGateReceipt", "StoreGateSignedData", "StoreGateAppStoreClient", "StoreGateHTTP", "StoreGateTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateOffersTests",
            dependencies: [
                "StoreGateCore", "StoreGateOffers",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateLedgerTests",
            dependencies: [
                "StoreGateCore", "StoreGateLedger", "StoreGateLedgerSQLite", "StoreGateLedgerPostgres",
                "StoreGateLedgerMigration",  // migrate round trips between the two backends
                "StoreGateTestSupport",
                "StoreGateEvents",  // the entitlement tracker, in the arrival-order property test
                "StoreGateDevTools",  // the ledger-stress helper the process tests run
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "PostgresNIO", package: "postgres-nio"),  // a migrated row changed behind the ledger
                .product(name: "PropertyBased", package: "swift-property-based"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateServerTests",
            dependencies: [
                "StoreGateServer", "StoreGateConsole", "StoreGateTestSupport", "StoreGateCore", "StoreGateReceipt",
                "StoreGateAppStoreClient", "StoreGateHTTP", "StoreGateLedger", "StoreGateLedgerSQLite", "StoreGateEvents", "StoreGateSync", "StoreGateWorkers",
                "StoreGateOffers",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateEventsTests",
            dependencies: [
                "StoreGateEvents", "StoreGateLedger", "StoreGateLedgerSQLite", "StoreGateLedgerPostgres", "StoreGateCore",
                "StoreGateHTTP", "StoreGateWorkers",
                "StoreGateTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateSyncTests",
            dependencies: [
                "StoreGateSync", "StoreGateLedger", "StoreGateLedgerSQLite", "StoreGateLedgerPostgres", "StoreGateCore",
                "StoreGateAppStoreClient", "StoreGateHTTP", "StoreGateSignedData", "StoreGateWorkers",
                "StoreGateTestSupport",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateWorkersTests",
            dependencies: [
                "StoreGateWorkers", "StoreGateCore",
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: testSwift
        ),
        .testTarget(
            name: "StoreGateCLITests",
            dependencies: [
                "StoreGateCLI", "StoreGateDevTools", "StoreGateTestSupport", "StoreGateCore",
                "StoreGateReceipt", "StoreGateAppStoreClient", "StoreGateLedger", "StoreGateLedgerSQLite", "StoreGateEvents", "StoreGateSync",
            ],
            swiftSettings: testSwift
        ),
    ]
)
