import Foundation

/// The memory this process may use, which the SQLite ledger's default page caches are sized
/// from: the machine's physical memory, or the control group's limit (`memory.max`, cgroup v2;
/// `memory.limit_in_bytes`, v1) when a container sets a lower one.
enum SQLiteMachineMemory {
    /// Read once per process.
    static let bytes: Int = {
        let physical = Int(clamping: ProcessInfo.processInfo.physicalMemory)
        let limits = ["/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"].compactMap(limit(at:))
        return min(physical, limits.min() ?? physical)
    }()

    /// A control group's limit in bytes, or nil when the file is absent or says "max".
    static func limit(at path: String) -> Int? {
        // An unreadable or absent file means no limit to honour: the physical memory applies.
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
