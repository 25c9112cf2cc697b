/// UTF-8 bytes to a `String`, refusing invalid UTF-8: the one strict conversion the payload and
/// JSON readers use.
///
/// `String(validating:as:)` goes through the standard library's generic path, which looks up
/// generic metadata on every call (a few percent of a 187-purchase receipt's decoding in a
/// profile). Decoding is specialized and repairs invalid UTF-8 by substituting U+FFFD, so a
/// string decoded from `bytes` holds exactly `bytes` if and only if they were valid.
extension String {
    /// `bytes` as text when they are valid UTF-8; `nil` otherwise.
    package init?(strictUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        var text = String(decoding: bytes, as: UTF8.self)
        guard text.withUTF8({ $0.elementsEqual(bytes) }) else { return nil }
        self = text
    }
}
