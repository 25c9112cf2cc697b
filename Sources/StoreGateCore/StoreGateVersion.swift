/// The version of StoreGate, the one place it is written.
///
/// Every request StoreGate sends to Apple names it in its `User-Agent` (``userAgent``), so
/// Apple's logs (and a developer reading a proxy's) can tell StoreGate's calls and their
/// version apart.
public enum StoreGateVersion {
    /// The release, as `MAJOR.MINOR.PATCH`.
    public static let current = "1.5.0"

    /// `StoreGate/<version>`: the `User-Agent` of every request to Apple.
    public static var userAgent: String { "StoreGate/" + current }
}
