public import Foundation
public import StoreGateCore

/// How the App Store sync recovers missed notifications from Get Notification History.
public struct NotificationSyncSettings: Sendable, Hashable {
    /// How long Apple keeps notification history: 180 days in production, 30 in the sandbox.
    public static func appleRetention(of environment: AppStoreEnvironment) -> Duration {
        environment == .sandbox ? .seconds(30 * 86_400) : .seconds(180 * 86_400)
    }

    /// Time between two runs (`STOREGATE_SYNC_INTERVAL_SECONDS`, default 15 minutes).
    public var interval: Duration
    /// How far before the end of the last synced window each run starts again
    /// (`STOREGATE_SYNC_LOOKBACK_SECONDS`, default 1 hour): a notification Apple lists late is
    /// still found, and one read twice is applied once.
    public var lookBack: Duration
    /// Where the very first run starts (`STOREGATE_SYNC_START`); `nil` starts at the oldest
    /// day Apple still keeps (180 days back in production, 30 in the sandbox).
    public var firstStart: Date?
    /// How long one instance holds the sync of an app and environment without renewing it: a
    /// killed instance's share is taken over after this (default 2 minutes).
    public var lease: Duration
    /// Pages one run reads at most before it saves its place and yields (default 500).
    public var maxPagesPerRun: Int

    /// Creates a value from its parts.
    public init(
        interval: Duration = .seconds(900),
        lookBack: Duration = .seconds(3600),
        firstStart: Date? = nil,
        lease: Duration = .seconds(120),
        maxPagesPerRun: Int = 500
    ) {
        self.interval = interval
        self.lookBack = lookBack
        self.firstStart = firstStart
        self.lease = lease
        self.maxPagesPerRun = maxPagesPerRun
    }
}
