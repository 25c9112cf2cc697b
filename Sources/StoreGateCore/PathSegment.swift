import Foundation

/// One segment of a URL path, as a router hands it over: still percent-encoded.
public enum PathSegment {
    /// The segment percent-decoded, or `nil` when it is empty or not valid percent-encoded text.
    ///
    /// Most segments carry no escape: Foundation's decoder is then skipped (it was a twentieth
    /// of an entitlement check's CPU time).
    ///
    /// - Parameter raw: The segment as it appears in the path.
    /// - Returns: The decoded text, never empty.
    public static func decoded(_ raw: some StringProtocol) -> String? {
        guard !raw.isEmpty else { return nil }
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return String(raw) }
        guard let decoded = raw.removingPercentEncoding, !decoded.isEmpty else { return nil }
        return decoded
    }
}
