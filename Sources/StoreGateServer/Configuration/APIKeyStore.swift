import Crypto
import Foundation

/// What an API key may call: one permission per authenticated endpoint.
public enum Permission: String, CaseIterable, Sendable, Hashable, Comparable {
    /// `POST /v1/receipts/verify`.
    case receiptsVerify = "receipts.verify"
    /// `POST /v1/transactions/verify`.
    case transactionsVerify = "transactions.verify"
    /// `GET /v1/accounts/{account}/entitlements`.
    case entitlementsRead = "entitlements.read"
    /// `POST /v1/accounts/{account}/consumables/{productId}/consume`.
    case consumablesConsume = "consumables.consume"
    /// `POST /verifyReceipt` (the drop-in for Apple's legacy endpoint).
    case verifyReceipt = "verifyreceipt"
    /// `GET /v1/events`.
    case eventsRead = "events.read"
    /// `GET /v1/webhooks/deliveries`, `POST /v1/webhooks/deliveries/{endpoint}/{sequence}/redeliver`,
    /// `GET/POST /v1/webhooks/endpoints`, `GET/PATCH/DELETE /v1/webhooks/endpoints/{endpoint}`,
    /// `POST /v1/webhooks/endpoints/{endpoint}/enable` and `…/test`.
    case webhooksManage = "webhooks.manage"
    /// Signing in to the web console (`/console`): search, accounts, the inspector, system.
    case console = "console"
    /// Reading the App Store sync's status (`GET /v1/sync/status`).
    case syncRead = "sync.read"
    /// Asking Apple for a test notification to check the webhook's wiring (`POST /v1/sync/test-notification`).
    case syncManage = "sync.manage"
    /// Refreshing an account from the App Store Server API (`POST /v1/accounts/{account}/refresh`).
    case accountsRefresh = "accounts.refresh"
    /// Granting and revoking entitlements by hand (`/v1/accounts/{account}/grants`), and the
    /// console's grant form.
    case grantsManage = "grants.manage"
    /// Reading the money and subscriber metrics (`GET /v1/analytics/{metric}`).
    case analyticsRead = "analytics.read"
    /// Moving a purchase family from one account to another by hand
    /// (`POST /v1/accounts/{account}/transfers`), and the console's move form. Apart from
    /// `grants.manage`: a grant adds access for a time, a move takes a purchase from one
    /// customer and gives it to another.
    case transfersManage = "transfers.manage"
    /// `POST /v1/offers/sign`: sign subscription offers for the app.
    case offersSign = "offers.sign"
    /// Extend subscriptions' renewal dates at Apple (one customer's, or every subscriber's).
    case subscriptionsExtend = "subscriptions.extend"
    /// Creating, listing and revoking API keys (`/v1/keys`). A key may only create keys with
    /// permissions it holds itself.
    case keysManage = "keys.manage"

    public static func < (lhs: Permission, rhs: Permission) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// The service's bearer API keys, each with a name and the endpoints it may call.
///
/// Only each key's SHA-256 digest is kept. A presented key is hashed and compared with every
/// configured digest in constant time, all of them every time, so neither the comparison nor
/// the number of keys tried reveals how much of a key was right. Keys never reach a log: the
/// request context carries the matching key's *name*.
///
/// Two sources, both parsed by ``init(environmentValue:fileContents:)``:
/// - `STOREGATE_API_KEYS`: `name:secret` entries separated by commas; each has every permission.
/// - `STOREGATE_API_KEYS_FILE`: one key per line, `name secret [permission …]` (whitespace
///   separated; `#` starts a comment); no permission, or `*`, means every permission.
///   Permissions: the raw values of ``Permission`` (`receipts.verify`, `entitlements.read`,
///   `grants.manage`, `transfers.manage`, …).
///
/// Names are 1...64 characters from `A-Z a-z 0-9 . _ -`; secrets have 16...256 printable
/// characters without spaces, commas or colons.
public struct APIKeyStore: Sendable {
    /// One configured key.
    public struct Key: Sendable {
        /// The key's name (logged and used in metrics instead of the key).
        public let name: String
        /// What it may call.
        public let permissions: Set<Permission>
        fileprivate let digest: SHA256Digest
    }

    /// The configured keys.
    public private(set) var keys: [Key] = []

    /// A store without keys: every authenticated endpoint answers 401.
    public init() {}

    /// The names of the configured keys, sorted.
    public var names: [String] { keys.map(\.name).sorted() }

    /// The permissions of the key named `name` (empty when there is none).
    public func permissions(ofKeyNamed name: String) -> Set<Permission> {
        keys.first { $0.name == name }?.permissions ?? []
    }

    /// Whether no key is configured.
    public var isEmpty: Bool { keys.isEmpty }

    /// Adds a key.
    ///
    /// - Throws: ``ConfigurationError`` (about `setting`) for a malformed name or secret, or a
    ///   name or secret already configured.
    public mutating func add(name: String, secret: String, permissions: Set<Permission> = Set(Permission.allCases), setting: String = ServerConfiguration.Setting.apiKeys.rawValue) throws(ConfigurationError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(Self.isNameByte) else {
            throw ConfigurationError(setting, "a key name has 1...64 characters from A-Z a-z 0-9 . _ -")
        }
        guard (16...256).contains(secret.utf8.count), secret.utf8.allSatisfy(Self.isSecretByte) else {
            throw ConfigurationError(setting, "key '\(name)': a secret has 16...256 printable ASCII characters without spaces, commas or colons")
        }
        guard !keys.contains(where: { $0.name == name }) else {
            throw ConfigurationError(setting, "key name '\(name)' appears twice")
        }
        let digest = SHA256.hash(data: Array(secret.utf8))
        guard !keys.contains(where: { $0.digest == digest }) else {
            throw ConfigurationError(setting, "key '\(name)' has the same secret as another key")
        }
        keys.append(Key(name: name, permissions: permissions, digest: digest))
    }

    /// Reads `STOREGATE_API_KEYS` entries (`name:secret,…`, every permission).
    ///
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_API_KEYS`.
    public mutating func add(environmentValue: String) throws(ConfigurationError) {
        let setting = ServerConfiguration.Setting.apiKeys.rawValue
        for entry in environmentValue.split(separator: ",") {
            let trimmed = entry.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            let parts = trimmed.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw ConfigurationError(setting, "an entry is written name:secret")
            }
            try add(name: String(parts[0]), secret: String(parts[1]), setting: setting)
        }
    }

    /// Reads the lines of an API key file (`name secret [permission …]`).
    ///
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_API_KEYS_FILE` and the line.
    public mutating func add(fileContents: String) throws(ConfigurationError) {
        let setting = ServerConfiguration.Setting.apiKeysFile.rawValue
        for (index, rawLine) in fileContents.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if fields.isEmpty { continue }
            guard fields.count >= 2 else {
                throw ConfigurationError(setting, "line \(index + 1): a key is written 'name secret [permission ...]'")
            }
            var permissions: Set<Permission> = []
            for field in fields.dropFirst(2) {
                if field == "*" {
                    permissions.formUnion(Permission.allCases)
                } else if let permission = Permission(rawValue: String(field)) {
                    permissions.insert(permission)
                } else {
                    let known = Permission.allCases.map(\.rawValue).joined(separator: ", ")
                    throw ConfigurationError(setting, "line \(index + 1): unknown permission '\(field)' (\(known), *)")
                }
            }
            if fields.count == 2 { permissions = Set(Permission.allCases) }
            do {
                try add(name: String(fields[0]), secret: String(fields[1]), permissions: permissions, setting: setting)
            } catch {
                throw ConfigurationError(setting, "line \(index + 1): \(error.reason)")
            }
        }
    }

    /// The key `presented` matches, or `nil`; every digest is compared, in constant time.
    public func match(_ presented: some StringProtocol) -> Key? {
        let digest = SHA256.hash(data: Array(presented.utf8))
        var found: Key?
        for key in keys {
            // SHA256Digest's == compares in constant time (swift-crypto's safeCompare).
            if key.digest == digest, found == nil {
                found = key
            }
        }
        return found
    }

    /// Creates a random secret: 32 bytes of the system's CSPRNG, base64url (43 characters).
    public static func randomSecret() -> String {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
        return "sg_" + Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    private static func isSecretByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: ",") && byte != UInt8(ascii: ":")
    }
}

/// The key file `storegate serve` uses when no API key is configured, so a fresh checkout
/// starts a usable service: `storegate-api-keys` beside the SQLite database (the current
/// directory for PostgreSQL), created once with one random key holding every permission, mode
/// 0600, and read again on later starts. Its path is logged, never its key.
public enum DevelopmentKeyFile {
    /// The file's name.
    public static let fileName = "storegate-api-keys"

    /// Where the file lives for `database`.
    public static func path(for database: ServerConfiguration.Database) -> String {
        switch database {
        case .sqlite(let path):
            return (URL(fileURLWithPath: path).deletingLastPathComponent().path as NSString).appendingPathComponent(fileName)
        case .postgres:
            return (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(fileName)
        }
    }

    /// Reads the file, creating it first when it does not exist.
    ///
    /// - Returns: The keys, and whether the file was created now.
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_API_KEYS_FILE` when the file cannot
    ///   be written or read.
    public static func loadOrCreate(for database: ServerConfiguration.Database) throws(ConfigurationError) -> (keys: APIKeyStore, path: String, created: Bool) {
        let path = path(for: database)
        let setting = ServerConfiguration.Setting.apiKeysFile.rawValue
        var created = false
        if !FileManager.default.fileExists(atPath: path) {
            let contents = """
                # StoreGate API keys: name secret [permission ...] (no permission: all of them).
                # Created because no key was configured; set STOREGATE_API_KEYS or STOREGATE_API_KEYS_FILE instead.
                default \(APIKeyStore.randomSecret())

                """
            guard FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ConfigurationError(setting, "no API key is configured and \(path) could not be created")
            }
            created = true
        }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError(setting, "cannot read \(path)")
        }
        var keys = APIKeyStore()
        try keys.add(fileContents: text)
        return (keys, path, created)
    }
}
