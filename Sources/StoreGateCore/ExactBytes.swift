import Foundation

/// Bytes as a dictionary key equal only to the very same bytes, and cheap to look up.
///
/// Its hash is a summary of the length and sixteen eight-byte windows spread evenly over the
/// bytes, so a lookup reads about 130 bytes to find its bucket and then compares the whole at
/// `memcmp` speed, instead of hashing every byte (SipHash or SHA-256 over a few KB costs more
/// than a microsecond). Keys that share a summary are still told apart by the comparison.
package struct ExactBytes: Hashable, Sendable {
    /// The bytes.
    package let bytes: ArraySlice<UInt8>
    private let summary: UInt64

    package init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.summary = bytes.withUnsafeBytes(Self.summary)
    }

    /// The same key over an array of its own: a key a cache keeps must not hold on to the
    /// (larger) buffer it was cut from.
    package func compacted() -> ExactBytes {
        ExactBytes(Array(bytes)[...], summary: summary)
    }

    private init(_ bytes: ArraySlice<UInt8>, summary: UInt64) {
        self.bytes = bytes
        self.summary = summary
    }

    package static func == (lhs: ExactBytes, rhs: ExactBytes) -> Bool {
        guard lhs.summary == rhs.summary, lhs.bytes.count == rhs.bytes.count else { return false }
        return lhs.bytes.withUnsafeBytes { left in
            rhs.bytes.withUnsafeBytes { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(summary)
    }

    /// FNV-1a over the length and sixteen windows of eight bytes at evenly spaced offsets (all
    /// of the bytes when there are fewer than 136).
    private static func summary(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        var summary: UInt64 = 0xcbf2_9ce4_8422_2325
        func mix(_ word: UInt64) {
            summary = (summary ^ word) &* 0x100_0000_01b3
        }
        mix(UInt64(raw.count))
        if raw.count < 136 {
            for byte in raw {
                mix(UInt64(byte))
            }
        } else {
            let last = raw.count - 8
            for window in 0..<16 {
                mix(raw.loadUnaligned(fromByteOffset: last * window / 15, as: UInt64.self))
            }
        }
        return summary
    }
}
