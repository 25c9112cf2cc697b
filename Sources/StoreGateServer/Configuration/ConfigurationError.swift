/// A setting the service cannot start with.
///
/// Its ``description`` is one line naming the setting (environment variable and flag) and
/// what is wrong with it, never the value of a secret: `storegate serve` prints it and exits.
public struct ConfigurationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The setting's environment variable, e.g. `STOREGATE_PORT`.
    public let setting: String
    /// What is wrong, for people.
    public let reason: String

    /// Creates an error about `setting`.
    ///
    /// - Parameters:
    ///   - setting: The environment variable naming the setting.
    ///   - reason: What is wrong with it (never the value of a secret).
    public init(_ setting: String, _ reason: String) {
        self.setting = setting
        self.reason = reason
    }

    public var description: String {
        if let flag = ServerConfiguration.Setting(rawValue: setting)?.flag {
            return "invalid configuration: \(setting) (\(flag)): \(reason)"
        }
        return "invalid configuration: \(setting): \(reason)"
    }
}
