import Crypto
public import Foundation

/// How a customer account maps to the `appAccountToken` (a UUID) an app sets on a purchase.
///
/// When a transaction carries an `appAccountToken`, the ledger records it only for the account
/// whose token it is; any other account gets ``LedgerError/Code/appAccountTokenMismatch``.
/// Transactions without a token (app receipts, purchases made without one) are not checked.
///
/// - ``accountIDIsUUID``: the account id *is* the token, written as a UUID string (either
///   case). An account whose id is not a UUID has no token, so it can record no transaction
///   that carries one.
/// - ``nameBased(namespace:)``: the token is the RFC 9562 version-5 (SHA-1, name-based) UUID
///   of the account id's UTF-8 bytes in the given namespace. The app computes the same UUID
///   when it sets `appAccountToken`.
public struct AppAccountTokenPolicy: Sendable, Hashable {
    private enum Backing: Hashable, Sendable {
        case accountIDIsUUID
        case nameBased(UUID)
    }

    private let backing: Backing

    /// The account id is the token, as a UUID string.
    public static let accountIDIsUUID = AppAccountTokenPolicy(backing: .accountIDIsUUID)

    /// The token is the version-5 UUID of the account id in `namespace`.
    public static func nameBased(namespace: UUID) -> AppAccountTokenPolicy {
        AppAccountTokenPolicy(backing: .nameBased(namespace))
    }

    /// The token of `account`, or `nil` when the account has none.
    public func token(for account: AccountID) -> UUID? {
        switch backing {
        case .accountIDIsUUID:
            return UUID(uuidString: account.rawValue)
        case .nameBased(let namespace):
            return Self.version5UUID(namespace: namespace, name: account.rawValue)
        }
    }

    /// RFC 9562 §5.5: SHA-1 of the namespace's 16 bytes followed by the name, first 16 bytes,
    /// with the version (5) and variant (10) bits set.
    static func version5UUID(namespace: UUID, name: String) -> UUID {
        var hasher = Insecure.SHA1()
        withUnsafeBytes(of: namespace.uuid) { hasher.update(bufferPointer: $0) }
        hasher.update(data: Array(name.utf8))
        var bytes = Array(hasher.finalize().prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x50
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        return UUID(uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
            bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }
}
