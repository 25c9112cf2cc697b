public import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A throwaway PostgreSQL server for tests and benchmarks: `initdb` into a temporary
/// directory, `postgres` on a free port of 127.0.0.1, stopped and deleted by ``stop()``.
///
/// ```swift
/// let server = try TemporaryPostgres.start()
/// defer { server.stop() }
/// let url = try server.createDatabase()   // postgres://storegate@127.0.0.1:PORT/db_…?sslmode=disable
/// ```
///
/// The binaries are looked up in `STOREGATE_POSTGRES_BIN`, then the newest
/// `/usr/lib/postgresql/<version>/bin`, then `PATH`. `initdb` and `postgres` refuse to run as
/// root, so when the process is root they run as the `postgres` user through `runuser`.
/// Authentication is `trust` for the superuser `storegate`, on loopback only.
///
/// Tests decide whether to run with ``isAvailable`` and ``isRequired``: set
/// `STOREGATE_REQUIRE_POSTGRES=1` (as CI does) and a machine without the binaries fails the
/// PostgreSQL tests instead of skipping them.
public final class TemporaryPostgres: Sendable {
    /// How the server is set up.
    public struct Options: Sendable {
        /// Where `initdb`, `pg_ctl` and `createdb` are; located automatically when `nil`.
        public var binDirectory: URL?
        /// PostgreSQL's `fsync`. Keep it on when measuring; turning it off speeds up tests.
        public var fsync: Bool
        /// PostgreSQL's `max_connections`.
        public var maxConnections: Int
        /// Extra `-c name=value` settings.
        public var settings: [String: String]

        /// Creates options: fsync on, 200 connections.
        public init(binDirectory: URL? = nil, fsync: Bool = true, maxConnections: Int = 200, settings: [String: String] = [:]) {
            self.binDirectory = binDirectory
            self.fsync = fsync
            self.maxConnections = maxConnections
            self.settings = settings
        }
    }

    /// Why a server could not be started or used.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// What went wrong, with the failing command's output.
        public let description: String
        /// Creates a failure with a message.
        public init(_ description: String) { self.description = description }
    }

    /// The address the server listens on.
    public let host = "127.0.0.1"
    /// The port it listens on.
    public let port: Int
    /// The superuser, authenticated by `trust`.
    public let username = "storegate"
    /// The temporary directory holding the cluster, its socket and its log.
    public let directory: URL
    /// The directory of the PostgreSQL binaries used.
    public let binDirectory: URL
    private let runAsPostgres: Bool
    private let options: Options
    private let stopped = Mutex(false)
    private let databaseCounter = Mutex(0)

    /// Whether `STOREGATE_REQUIRE_POSTGRES=1`: PostgreSQL tests must run, never skip.
    public static var isRequired: Bool {
        ProcessInfo.processInfo.environment["STOREGATE_REQUIRE_POSTGRES"] == "1"
    }

    /// Whether the PostgreSQL binaries are on this machine.
    public static var isAvailable: Bool { locateBinaries() != nil }

    /// The directory holding `initdb`, `pg_ctl` and `postgres`, or `nil`.
    public static func locateBinaries() -> URL? {
        let fileManager = FileManager.default
        func holdsServer(_ url: URL) -> Bool {
            ["initdb", "pg_ctl", "postgres"].allSatisfy { fileManager.isExecutableFile(atPath: url.appendingPathComponent($0).path) }
        }
        if let configured = ProcessInfo.processInfo.environment["STOREGATE_POSTGRES_BIN"] {
            let url = URL(fileURLWithPath: configured)
            return holdsServer(url) ? url : nil
        }
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = ((try? fileManager.contentsOfDirectory(atPath: root.path)) ?? [])  // an unreadable folder means no candidates
            .compactMap { name in Int(name).map { ($0, name) } }
            .sorted { $0.0 > $1.0 }
        for (_, name) in versions {
            let bin = root.appendingPathComponent(name).appendingPathComponent("bin")
            if holdsServer(bin) { return bin }
        }
        for entry in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let url = URL(fileURLWithPath: String(entry))
            if holdsServer(url) { return url }
        }
        return nil
    }

    /// Creates a cluster in a new temporary directory and starts a server on a free port.
    ///
    /// Blocking (it waits for `initdb` and for the server to accept connections).
    ///
    /// - Throws: ``Failure`` when the binaries are missing or a step fails (its output is in
    ///   the message).
    public static func start(_ options: Options = Options()) throws -> TemporaryPostgres {
        guard let bin = options.binDirectory ?? locateBinaries() else {
            throw Failure("PostgreSQL binaries not found (install postgresql, or set STOREGATE_POSTGRES_BIN to the folder holding initdb and pg_ctl)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let runAsPostgres = geteuid() == 0
        do {
            if runAsPostgres { try run("/usr/bin/env", ["chown", "postgres", directory.path]) }
            try run(bin.appendingPathComponent("initdb").path, [
                "-D", directory.appendingPathComponent("data").path, "-A", "trust", "-U", "storegate", "--no-sync", "-E", "UTF8", "--locale=C",
            ], asPostgres: runAsPostgres)
            var lastError: (any Error)?
            for _ in 0..<5 {
                let port = try FreePort.next()
                do {
                    try startServer(bin: bin, directory: directory, port: port, options: options, asPostgres: runAsPostgres)
                    return TemporaryPostgres(port: port, directory: directory, binDirectory: bin, runAsPostgres: runAsPostgres, options: options)
                } catch {
                    lastError = error  // most likely the port was taken in between: try another
                }
            }
            throw lastError ?? Failure("PostgreSQL did not start")
        } catch {
            try? FileManager.default.removeItem(at: directory)  // best effort: the start failure is what matters
            throw error
        }
    }

    /// ``start(_:)`` on a thread of its own (see ``runBlocking(_:)``): for async callers,
    /// which must not hold a thread of the cooperative pool while `initdb` runs.
    public static func launch(_ options: Options = Options()) async throws -> TemporaryPostgres {
        try await runBlocking { try start(options) }
    }

    /// ``createDatabase(_:)`` on a thread of its own, for async callers.
    public func makeDatabase(_ name: String? = nil) async throws -> String {
        try await runBlocking { try self.createDatabase(name) }
    }

    /// ``stop()`` on a thread of its own, for async callers.
    public func shutdown() async {
        _ = try? await runBlocking { self.stop() }  // stop() does not throw; runBlocking's signature does
    }

    private init(port: Int, directory: URL, binDirectory: URL, runAsPostgres: Bool, options: Options) {
        self.port = port
        self.directory = directory
        self.binDirectory = binDirectory
        self.runAsPostgres = runAsPostgres
        self.options = options
    }

    /// Stops the server as an outage would (fast shutdown: open connections are closed),
    /// keeping its data for ``resume()``.
    public func pause() async throws {
        try await runBlocking {
            _ = try Self.run(self.binDirectory.appendingPathComponent("pg_ctl").path, [
                "-D", self.directory.appendingPathComponent("data").path, "-m", "fast", "-w", "stop",
            ], asPostgres: self.runAsPostgres)
        }
    }

    /// Starts the server again on the same port with the same data, after ``pause()``.
    public func resume() async throws {
        try await runBlocking {
            try Self.startServer(bin: self.binDirectory, directory: self.directory, port: self.port, options: self.options, asPostgres: self.runAsPostgres)
        }
    }

    deinit {
        stop()
    }

    /// A connection URL for `database` (`sslmode=disable`: the server has no TLS).
    public func url(database: String = "postgres") -> String {
        "postgres://\(username)@\(host):\(port)/\(database)?sslmode=disable"
    }

    /// Creates a new, empty database and returns its connection URL.
    ///
    /// - Parameter name: The database name; a unique `db_<n>_<random>` when `nil`.
    /// - Throws: ``Failure`` when `createdb` fails.
    @discardableResult
    public func createDatabase(_ name: String? = nil) throws -> String {
        let number = databaseCounter.withLock { counter -> Int in
            counter += 1
            return counter
        }
        let database = name ?? "db_\(number)_\(UUID().uuidString.prefix(8).lowercased())"
        try Self.run(binDirectory.appendingPathComponent("createdb").path, [
            "-h", host, "-p", String(port), "-U", username, database,
        ])
        return url(database: database)
    }

    /// Stops the server and deletes its directory. Safe to call more than once.
    public func stop() {
        let alreadyStopped = stopped.withLock { value -> Bool in
            defer { value = true }
            return value
        }
        guard !alreadyStopped else { return }
        _ = try? Self.run(binDirectory.appendingPathComponent("pg_ctl").path, [  // the directory goes away next either way
            "-D", directory.appendingPathComponent("data").path, "-m", "immediate", "-w", "stop",
        ], asPostgres: runAsPostgres)
        try? FileManager.default.removeItem(at: directory)  // best effort cleanup of a temporary folder
    }

    /// The server's log so far (for failure messages).
    public func log() -> String {
        (try? String(contentsOf: directory.appendingPathComponent("log"), encoding: .utf8)) ?? ""  // absent log: nothing to show
    }

    // MARK: Processes

    private static func startServer(bin: URL, directory: URL, port: Int, options: Options, asPostgres: Bool) throws {
        var settings = [
            "listen_addresses": "127.0.0.1",
            "fsync": options.fsync ? "on" : "off",
            "max_connections": String(options.maxConnections),
            "unix_socket_directories": directory.path,
        ]
        settings.merge(options.settings) { _, new in new }
        let serverOptions = (["-p \(port)"] + settings.sorted { $0.key < $1.key }.map { "-c \($0.key)=\($0.value)" }).joined(separator: " ")
        try run(bin.appendingPathComponent("pg_ctl").path, [
            "-D", directory.appendingPathComponent("data").path, "-l", directory.appendingPathComponent("log").path,
            "-w", "-t", "60", "-o", serverOptions, "start",
        ], asPostgres: asPostgres)
    }

    /// Runs a program to completion; throws with its output when it fails.
    ///
    /// `posix_spawn` and a blocking `waitpid` rather than Foundation's `Process`: on Linux,
    /// `Process.waitUntilExit()` was seen to miss the exit of `pg_ctl start` (whose server
    /// outlives it), hanging forever. Output goes to a temporary file, not a pipe the
    /// daemonized server could hold open.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String], asPostgres: Bool = false) throws -> String {
        let argv0 = asPostgres ? "/usr/sbin/runuser" : executable
        let argv = asPostgres ? [argv0, "-u", "postgres", "--", executable] + arguments : [argv0] + arguments
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-pg-out-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }  // best effort: a temporary file

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)

        let cArguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { for pointer in cArguments { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, argv0, &actions, nil, cArguments, environ)
        guard spawned == 0 else {
            throw Failure("could not start \(argv0): error \(spawned)")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw Failure("waitpid failed for \(argv0): errno \(errno)") }
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""  // output is only for messages
        let exitedNormally = status & 0x7F == 0
        let exitCode = (status >> 8) & 0xFF
        guard exitedNormally, exitCode == 0 else {
            let name = URL(fileURLWithPath: executable).lastPathComponent
            throw Failure("\(name) failed (status \(status)): \(text.suffix(2000))")
        }
        return text
    }
}
