import CLibFuzzer
import Foundation
import StoreGateCore

/// How every StoreGate fuzz target runs: libFuzzer calls ``run(_:)``'s body with each input,
/// and this type enforces the invariants that hold for every target on top of "no crash":
///
/// - **Time**: an input may use at most ``timeBudget`` of process CPU time (all threads,
///   including the concurrency pool that runs async verification). CPU time rather than wall
///   time, so a loaded or niced machine does not make an input "slow"; an input over budget is
///   run twice more and fails only if all three runs are over it, so a one-off stall (a page
///   fault storm, the allocator's quarantine recycling) is not reported. libFuzzer's own
///   `-timeout` (whole seconds, wall time) stays as the backstop for hangs.
/// - **Memory**: the live heap may grow by at most ``memoryBudget`` bytes while an input runs
///   (malloc/free hooks of AddressSanitizer; libFuzzer's `-malloc_limit_mb` also stops any
///   single allocation over it).
///
/// A failed invariant prints what failed and traps; libFuzzer then writes the input as a
/// `crash-…` artifact, and `Scripts/fuzz.sh` prints it as base64.
public enum FuzzTarget {
    /// The CPU time one input may take: 100 ms (measured under ASan and coverage
    /// instrumentation, which make the code several times slower than a release build); ten
    /// times that in a debug build (CI's short run), where unoptimized code is that much slower
    /// again — a blow-up in the input's size still overruns it.
    #if DEBUG
    public static let timeBudget: Duration = .milliseconds(1000)
    #else
    public static let timeBudget: Duration = .milliseconds(100)
    #endif
    /// How much the live heap may grow while one input runs: 64 MiB.
    public static let memoryBudget: Int64 = 64 << 20

    nonisolated(unsafe) private static var body: ([UInt8]) -> Void = { _ in }
    nonisolated(unsafe) private static var hooksInstalled = false

    /// Runs libFuzzer with `body` as the target; never returns.
    ///
    /// `setUp` runs first (load trust anchors, originals; pre-warm caches), outside the
    /// budgets.
    public static func run(_ body: @escaping ([UInt8]) -> Void) -> Never {
        // libFuzzer's deadly-signal handler must see a trap first; Swift's backtracer would
        // take seconds per crash and print an interactive prompt.
        setenv("SWIFT_BACKTRACE", "enable=no", 1)
        Self.body = body
        hooksInstalled = storegate_fuzz_install_memory_hooks() != 0
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
            FuzzTarget.execute(bytes)
            return 0
        }
        exit(status)
    }

    private static func execute(_ bytes: [UInt8]) {
        storegate_fuzz_memory_begin()
        var elapsed = measure(bytes)
        let growth = storegate_fuzz_memory_peak_growth()
        if hooksInstalled, growth > memoryBudget {
            fail("the heap grew by \(growth / 1024) KiB for one input; the budget is \(memoryBudget / 1024) KiB")
        }
        if elapsed > timeBudget {
            // Twice more; only a repeatable overrun counts.
            elapsed = min(elapsed, measure(bytes))
            if elapsed > timeBudget {
                elapsed = min(elapsed, measure(bytes))
            }
            if elapsed > timeBudget {
                fail("one input took \(elapsed) of CPU time in each of three runs; the budget is \(timeBudget)")
            }
        }
    }

    private static func measure(_ bytes: [UInt8]) -> Duration {
        let start = processCPUTime()
        body(bytes)
        return processCPUTime() - start
    }

    private static func processCPUTime() -> Duration {
        var time = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
        return .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
    }

    /// Reports a broken invariant and traps, so libFuzzer saves the input.
    public static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("\n==StoreGate fuzz invariant failed: \(message)\n".utf8))
        fatalError(message)
    }

    /// Traps with `message` unless `condition` holds.
    public static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }
}

extension FuzzTarget {
    /// Where two byte strings first differ, with some context of each, for failure messages.
    public static func difference(_ first: [UInt8], _ second: [UInt8]) -> String {
        let common = zip(first, second).prefix { $0 == $1 }.count
        let start = max(0, common - 60)
        func excerpt(_ bytes: [UInt8]) -> String {
            String(decoding: bytes[min(start, bytes.count)..<min(bytes.count, common + 60)], as: UTF8.self)
        }
        return "first difference at byte \(common) of \(first.count)/\(second.count): «\(excerpt(first))» vs «\(excerpt(second))»"
    }
}
