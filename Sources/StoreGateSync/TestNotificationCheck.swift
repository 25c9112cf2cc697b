public import Foundation
public import StoreGateAppStoreClient
import StoreGateCore
public import StoreGateLedger

/// Checks the wiring from Apple to StoreGate's webhook: asks Apple for a test notification
/// (Request a Test Notification), waits until Apple reports its delivery (Get Test
/// Notification Status), and, given the ledger, confirms the webhook stored it.
///
/// Apple reports `SUCCESS` only when the webhook answered 200, which StoreGate's does only once
/// the notification is committed; with the ledger the check also applies the verified test
/// notification itself, which changes nothing when the webhook stored it already (and says
/// so when it had not).
public struct TestNotificationCheck: Sendable {
    /// One step of the check, printed as it happens.
    public struct Hop: Sendable, Hashable, Codable, CustomStringConvertible {
        /// `requested`, `attempt`, `stored`, `failed`.
        public let name: String
        /// What happened.
        public let detail: String
        /// Whether this hop is a success.
        public let isOK: Bool

        public var description: String { "\(isOK ? "PASS" : "FAIL")  \(name.padding(toLength: 10, withPad: " ", startingAt: 0)) \(detail)" }
    }

    /// The check's outcome.
    public struct Result: Sendable, Hashable, Codable {
        /// The environment checked.
        public var environment: String
        /// When the check ran.
        public var checkedAt: Date
        /// Every hop, in order.
        public var hops: [Hop] = []
        /// Whether the notification reached StoreGate and was stored (a failed delivery that
        /// Apple retried with success still passes).
        public var passed: Bool {
            guard let last = hops.last else { return false }
            return last.isOK && (last.name == "stored" || last.name == "delivered")
        }
    }

    private let client: AppStoreServerAPIClient
    private let ledger: (any Ledger)?
    private let timeout: Duration
    private let pollInterval: Duration

    /// Creates a check.
    ///
    /// - Parameters:
    ///   - client: The environment's App Store Server API client.
    ///   - ledger: The ledger the webhook writes to, to confirm the notification is stored;
    ///     `nil` stops at Apple's delivery report.
    ///   - timeout: How long to wait for Apple's delivery (default 60 s).
    ///   - pollInterval: Time between two status requests (default 2 s).
    public init(client: AppStoreServerAPIClient, ledger: (any Ledger)?, timeout: Duration = .seconds(60), pollInterval: Duration = .seconds(2)) {
        self.client = client
        self.ledger = ledger
        self.timeout = timeout
        self.pollInterval = pollInterval
    }

    /// Runs the check, calling `progress` with each hop as it happens.
    public func run(progress: @Sendable (Hop) -> Void = { _ in }) async -> Result {
        var result = Result(environment: client.environment.rawValue, checkedAt: Date())
        func hop(_ name: String, _ detail: String, _ isOK: Bool) {
            let hop = Hop(name: name, detail: detail, isOK: isOK)
            result.hops.append(hop)
            progress(hop)
        }
        let token: String
        do {
            token = try await client.requestTestNotification()
        } catch {
            hop("requested", "Apple refused the test notification: \(error.code): \(error.reason)", false)
            return result
        }
        hop("requested", "Apple accepted (\(client.environment.rawValue)); token …\(token.suffix(8))", true)
        let deadline = ContinuousClock.now + timeout
        var reported = 0
        while true {
            let status: TestNotificationStatus
            do {
                status = try await client.testNotificationStatus(token: token)
            } catch where error.apiError == .testNotificationNotFound || error.apiError == .statusRequestNotFound {
                // Not sent yet.
                guard ContinuousClock.now < deadline else {
                    hop("attempt", "Apple had not sent it after \(timeout.components.seconds) s", false)
                    return result
                }
                try? await Task.sleep(for: pollInterval)
                continue
            } catch {
                hop("attempt", "Get Test Notification Status failed: \(error.code): \(error.reason)", false)
                return result
            }
            for attempt in status.sendAttempts.dropFirst(reported) {
                let outcome = attempt.sendAttemptResult ?? "UNKNOWN"
                let when = attempt.attemptDate.map { " at \($0.formatted(Date.ISO8601FormatStyle()))" } ?? ""
                hop("attempt", "Apple's delivery\(when): \(outcome)", outcome == "SUCCESS")
                if outcome == "SUCCESS" {
                    guard let ledger else {
                        hop("delivered", "the webhook answered 200, which it does only once the notification is stored", true)
                        return result
                    }
                    do {
                        let stored = try await ledger.apply(status.notification)
                        if stored.isDuplicate {
                            hop("stored", "notification \(status.notification.notificationUUID) is in the ledger", true)
                        } else {
                            hop("stored", "Apple reported success but the ledger did not have notification \(status.notification.notificationUUID): is Apple's URL another service?", false)
                        }
                    } catch {
                        hop("stored", "the ledger failed: \(error.code): \(error.reason)", false)
                    }
                    return result
                }
            }
            reported = status.sendAttempts.count
            guard ContinuousClock.now < deadline else {
                hop("attempt", "no successful delivery after \(timeout.components.seconds) s", false)
                return result
            }
            try? await Task.sleep(for: pollInterval)
        }
    }

    /// The prefix of the stored results' names among the ledger's leased states.
    public static let statePrefix = "sync/test-notification/"

    /// Keeps `result` in the ledger (the last check per environment), for readiness details.
    public static func remember(_ result: Result, in store: any LeasedStateStore, holder: String) async {
        let name = statePrefix + result.environment
        guard let text = try? String(decoding: JSONEncoder().encode(result), as: UTF8.self),
              (try? await store.acquireLease(on: name, holder: holder, now: Date(), lease: .seconds(30))) != nil
        else { return }
        _ = try? await store.saveLeasedState(name, value: text, holder: holder, now: Date(), lease: .seconds(30))
        try? await store.releaseLease(on: name, holder: holder)
    }

    /// The last check of each environment, kept by ``remember(_:in:holder:)``.
    public static func lastResults(in store: any LeasedStateStore) async throws(LedgerError) -> [Result] {
        try await store.leasedStates(prefix: statePrefix).compactMap { state in
            state.value.flatMap { try? JSONDecoder().decode(Result.self, from: Data($0.utf8)) }
        }
    }
}
