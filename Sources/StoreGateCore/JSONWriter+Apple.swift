package import Foundation

/// Apple's verifyReceipt spelling: ids, quantities and `_ms` dates as strings of digits,
/// booleans as `"true"`/`"false"`, each date three times (`x` in Etc/GMT, `x_ms`, `x_pst`) from
/// one whole millisecond. Every verifyReceipt document StoreGate writes (a receipt decoded
/// offline, Apple's reply written back, the `/verifyReceipt` drop-in's reply) goes through these.
extension JSONWriter {
    /// `name`, `name_ms` and `name_pst`: one date in Apple's three spellings, all made from the
    /// same whole millisecond (``CivilTime/AppleDate``); nothing when `date` is `nil`.
    package mutating func appleDate(_ name: StaticString, _ date: Date?) {
        guard let date else { return }
        let apple = CivilTime.AppleDate(date)
        key(name)
        string(apple.gmt)
        key(name, suffix: "_ms")
        integerString(apple.milliseconds)
        key(name, suffix: "_pst")
        string(apple.pst)
    }

    /// An integer as a string of digits (`"quantity": "1"`); nothing when `value` is `nil`.
    package mutating func appleInteger(_ name: StaticString, _ value: Int?) {
        guard let value else { return }
        key(name)
        integerString(Int64(value))
    }

    /// A boolean as `"true"` or `"false"`; nothing when `value` is `nil`.
    package mutating func appleBool(_ name: StaticString, _ value: Bool?) {
        guard let value else { return }
        member(name, value ? "true" : "false")
    }

    /// An identifier Apple writes as a JSON number (`adam_id`, `download_id`): a number when
    /// `value` is an integer's own decimal digits, else the string as read (so that a reply
    /// that spelled it otherwise reads back the same); nothing when `value` is `nil`.
    package mutating func appleNumber(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        if let integer = Int64(value), String(integer) == value {
            member(name, integer)
        } else {
            member(name, value)
        }
    }
}
