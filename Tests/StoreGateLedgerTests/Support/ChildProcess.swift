import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A child process whose standard output goes to a file, for the crash and multi-process
/// tests (`posix_spawn`, so the test can SIGKILL it at any moment and read what it printed).
struct ChildProcess {
    let pid: pid_t
    let outputPath: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts `executable` with `arguments`; standard output and error go to `outputPath`.
    static func spawn(_ executable: URL, _ arguments: [String], outputPath: String) throws -> ChildProcess {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable.path, &actions, nil, argv, environ)
        guard status == 0 else { throw Failure(description: "posix_spawn \(executable.path) failed: \(status)") }
        return ChildProcess(pid: pid, outputPath: outputPath)
    }

    /// What the child printed so far.
    ///
    /// Decoded leniently (a byte that is not UTF-8 becomes U+FFFD), so what the child printed
    /// is never lost to the check of its encoding; a file that cannot be read says so.
    func output() -> String {
        guard let data = FileManager.default.contents(atPath: outputPath) else { return "(no output file at \(outputPath))" }
        return String(decoding: data, as: UTF8.self)
    }

    /// The complete lines printed so far (a line cut by a kill is not counted).
    func completeLines() -> [String] {
        let text = output()
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the text after the last newline: empty, or a cut line
        return lines
    }

    /// Sends SIGKILL.
    func kill() {
        _ = Glibc.kill(pid, SIGKILL)
    }

    /// Waits for the child to end and returns its exit status (or 128 + signal).
    @discardableResult
    func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }

    /// The exit status if the child has ended (reaping it), else `nil`.
    func poll() -> Int32? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : 128 + signal
    }
}

/// The `storegate-dev` executable built alongside these tests (its `ledger-stress` helper).
enum StoreGateBinary {
    /// `STOREGATE_DEV_BINARY`, else `storegate-dev` next to the test bundle (SwiftPM builds the
    /// executables the tests depend on, in the same configuration).
    static func locate() throws -> URL {
        if let configured = ProcessInfo.processInfo.environment["STOREGATE_DEV_BINARY"] {
            return URL(fileURLWithPath: configured)
        }
        let name = "storegate-dev"
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent(name))
        if let executable = Bundle.main.executableURL {
            candidates.append(executable.deletingLastPathComponent().appendingPathComponent(name))
        }
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent(name))
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) {
            return found
        }
        throw ChildProcess.Failure(description: "no \(name) executable next to the tests (looked at \(candidates.map(\.path))); run `swift build --product \(name)` in the same configuration or set STOREGATE_DEV_BINARY")
    }
}
