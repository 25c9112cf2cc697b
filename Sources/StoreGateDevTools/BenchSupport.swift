import Foundation

/// Timing and memory helpers shared by the benchmark suites.
enum BenchSupport {
    /// Monotonic nanoseconds.
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Runs `body` `iterations` times and returns each duration in microseconds, sorted.
    static func measure(iterations: Int, _ body: () async throws -> Void) async rethrows -> [Double] {
        var samples: [Double] = []
        samples.reserveCapacity(iterations)
        for _ in 0..<iterations {
            let start = now()
            try await body()
            samples.append(Double(now() - start) / 1000)
        }
        return samples.sorted()
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let index = min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))
        return sorted[index]
    }

    static func median(_ sorted: [Double]) -> Double { percentile(sorted, 0.5) }

    /// Resident set size and its peak, in bytes, from /proc/self/status (Linux).
    static func memory() -> (rss: Int, peak: Int)? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        var rss = 0
        var peak = 0
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let kilobytes = Int(parts[1]) else { continue }
            if parts[0] == "VmRSS:" { rss = kilobytes * 1024 }
            if parts[0] == "VmHWM:" { peak = kilobytes * 1024 }
        }
        return (rss, peak)
    }

    /// Anonymous resident memory (the heap, not mapped files), in bytes (Linux `RssAnon`).
    static func anonymousMemory() -> Int? { residentMemory("RssAnon:") }

    /// Resident pages of mapped files (the binary, libraries, a memory-mapped database), in
    /// bytes (Linux `RssFile`).
    static func fileBackedMemory() -> Int? { residentMemory("RssFile:") }

    /// One `/proc/self/status` figure in bytes (`field` is its name with the colon).
    static func residentMemory(_ field: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(field) {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if parts.count >= 2, let kilobytes = Int(parts[1]) { return kilobytes * 1024 }
        }
        return nil
    }

    /// Resets the peak-RSS watermark to the current RSS (Linux: `5` to /proc/self/clear_refs).
    static func resetPeakMemory() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    static func format(_ microseconds: Double) -> String {
        String(format: "%9.1f", microseconds)
    }

    /// Whether this binary was built with optimizations.
    static var isOptimized: Bool {
        #if DEBUG
        return false
        #else
        return true
        #endif
    }
}

extension BenchSupport {
    /// CPU seconds (user and system) used so far by this process and, given its data folder,
    /// by a local PostgreSQL server: its postmaster with the children it reaped, and every live
    /// child (one per connection, the background workers). Two readings around a run give the
    /// CPU the run took wherever it ran, a steadier cost than wall time on a shared machine.
    static func cpuSeconds(postgresData: URL? = nil) -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        var seconds = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        guard let postgresData,
            let pidFile = try? String(contentsOf: postgresData.appendingPathComponent("postmaster.pid"), encoding: .utf8),
            let postmaster = pidFile.split(separator: "\n").first.flatMap({ Int($0) })
        else { return seconds }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        // /proc/<pid>/stat after the command's closing parenthesis: state, ppid, … (fields 3…).
        func fields(_ pid: String) -> [Substring]? {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { return nil }
            return stat[stat.index(after: end)...].split(separator: " ")
        }
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            guard let stat = fields(pid), stat.count > 14 else { continue }
            let isPostmaster = Int(pid) == postmaster
            guard isPostmaster || Int(stat[1]) == postmaster else { continue }
            // utime, stime (fields 14, 15); the postmaster's cutime, cstime (16, 17) hold the
            // connections that ended.
            let own = (Double(stat[11]) ?? 0) + (Double(stat[12]) ?? 0)
            let reaped = isPostmaster ? (Double(stat[13]) ?? 0) + (Double(stat[14]) ?? 0) : 0
            seconds += (own + reaped) / ticks
        }
        return seconds
    }
}
