import Dispatch
import Foundation

/// What kind of network an IP address belongs to, for refusing webhook URLs that reach into
/// the service's own host or network (server-side request forgery).
public enum WebhookAddressClass: String, Sendable, Hashable, CaseIterable {
    /// A routable, public address: allowed.
    case global
    /// `127.0.0.0/8`, `::1`.
    case loopback
    /// RFC 1918 (`10/8`, `172.16/12`, `192.168/16`), IPv6 unique local `fc00::/7` and the
    /// deprecated site-local `fec0::/10`.
    case `private`
    /// `169.254/16`, `fe80::/10` (cloud metadata services live here).
    case linkLocal = "link_local"
    /// `0.0.0.0/8`, `::`.
    case unspecified
    /// Carrier-grade NAT, `100.64/10` (RFC 6598).
    case sharedAddressSpace = "shared_address_space"
    /// `224/4`, `ff00::/8`.
    case multicast
    /// `240/4` (broadcast included), `192.0.0/24`, `198.18/15`.
    case reserved

    /// Classifies a 4-byte IPv4 or 16-byte IPv6 address; IPv4 addresses embedded in IPv6
    /// (mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
    /// `2002::/16`) are classified as the IPv4 address they carry. Any other length is
    /// `reserved` (fail closed).
    public static func of(_ bytes: [UInt8]) -> WebhookAddressClass {
        switch bytes.count {
        case 4: return ofIPv4(bytes[0], bytes[1], bytes[2], bytes[3])
        case 16: return ofIPv6(bytes)
        default: return .reserved
        }
    }

    private static func ofIPv4(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) -> WebhookAddressClass {
        switch (a, b, c) {
        case (0, _, _): return .unspecified
        case (127, _, _): return .loopback
        case (10, _, _), (172, 16...31, _), (192, 168, _): return .private
        case (169, 254, _): return .linkLocal
        case (100, 64...127, _): return .sharedAddressSpace
        case (224...239, _, _): return .multicast
        case (240...255, _, _), (192, 0, 0), (198, 18...19, _): return .reserved
        default: return .global
        }
    }

    private static func ofIPv6(_ bytes: [UInt8]) -> WebhookAddressClass {
        let firstTwelveZero = bytes[0..<12].allSatisfy { $0 == 0 }
        if firstTwelveZero {
            if bytes[12..<16].allSatisfy({ $0 == 0 }) { return .unspecified }
            if bytes[12..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return .loopback }
            return ofIPv4(bytes[12], bytes[13], bytes[14], bytes[15])  // IPv4-compatible
        }
        if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xFF && bytes[11] == 0xFF {
            return ofIPv4(bytes[12], bytes[13], bytes[14], bytes[15])  // IPv4-mapped
        }
        if bytes[0] == 0x00, bytes[1] == 0x64, bytes[2] == 0xFF, bytes[3] == 0x9B, bytes[4..<12].allSatisfy({ $0 == 0 }) {
            return ofIPv4(bytes[12], bytes[13], bytes[14], bytes[15])  // NAT64
        }
        if bytes[0] == 0x20, bytes[1] == 0x02 {
            return ofIPv4(bytes[2], bytes[3], bytes[4], bytes[5])  // 6to4
        }
        if bytes[0] & 0xFE == 0xFC { return .private }
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0x80 { return .linkLocal }
        if bytes[0] == 0xFE, bytes[1] & 0xC0 == 0xC0 { return .private }
        if bytes[0] == 0xFF { return .multicast }
        return .global
    }
}

/// Why a webhook URL was refused.
///
/// Shaped like the other StoreGate errors: equal by ``code``; ``reason`` is for people.
public struct WebhookAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The stable snake-case code (the API's error code).
        public let rawValue: String
        /// A code from its text.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// ``rawValue``.
        public var description: String { rawValue }

        /// Not an `http(s)://host/…` URL.
        public static let invalidURL = Code(rawValue: "webhook_url_invalid")
        /// The host does not resolve.
        public static let unresolvable = Code(rawValue: "webhook_host_unresolvable")
        /// The host resolves to a loopback, private, link-local, unspecified, shared,
        /// multicast or reserved address.
        public static let forbiddenAddress = Code(rawValue: "webhook_address_forbidden")
    }

    /// What was wrong.
    public let code: Code
    /// A human-readable explanation (the host and the address class; never a secret).
    public let reason: String
    /// The class of the refused address, for ``Code/forbiddenAddress``.
    public let addressClass: WebhookAddressClass?

    /// Creates an error.
    public init(_ code: Code, _ reason: String, addressClass: WebhookAddressClass? = nil) {
        self.code = code
        self.reason = reason
        self.addressClass = addressClass
    }

    /// Equal by code.
    public static func == (lhs: WebhookAddressError, rhs: WebhookAddressError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    /// `code: reason`.
    public var description: String { "\(code): \(reason)" }
}

/// Which webhook URLs may be called: by default only those whose host resolves to global
/// addresses only, checked when an endpoint is created or changed and again before every
/// round of deliveries (a DNS answer may change after creation).
///
/// `allowsPrivateAddresses` (`STOREGATE_WEBHOOK_ALLOW_PRIVATE=1`) turns the check off, for a
/// receiver on the same host or network (and the tests' loopback receivers).
///
/// Limits: the HTTP client resolves the host again when it connects, so a DNS server
/// answering differently within that window (DNS rebinding) is not stopped by this check
/// alone; run the service behind an egress firewall that blocks internal ranges as well.
public struct WebhookAddressPolicy: Sendable {
    /// Resolves a host name to its addresses (4 or 16 bytes each).
    public typealias Resolver = @Sendable (String) async -> [[UInt8]]?

    /// A policy allowing every address (`STOREGATE_WEBHOOK_ALLOW_PRIVATE=1`).
    public static let allowingEveryAddress = WebhookAddressPolicy(allowsPrivateAddresses: true)

    /// Whether every address is allowed (no resolution, no check).
    public var allowsPrivateAddresses: Bool
    private let resolver: Resolver

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - allowsPrivateAddresses: Allow every address.
    ///   - resolver: The resolver (the system's `getaddrinfo` by default; tests inject one).
    public init(allowsPrivateAddresses: Bool = false, resolver: @escaping Resolver = WebhookAddressPolicy.systemResolve) {
        self.allowsPrivateAddresses = allowsPrivateAddresses
        self.resolver = resolver
    }

    /// The host of an `http(s)` URL without credentials (IPv6 brackets removed), or a
    /// ``WebhookAddressError/Code/invalidURL`` error.
    public static func host(of url: String) throws(WebhookAddressError) -> String {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["https", "http"].contains(scheme),
              var host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil
        else {
            throw WebhookAddressError(.invalidURL, "the URL must be http(s)://host/… without credentials")
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return host.removingPercentEncoding ?? host
    }

    /// Checks `url`: its host must resolve, to global addresses only (unless private ones are allowed).
    ///
    /// - Throws: ``WebhookAddressError`` with the code of the refusal.
    public func check(_ url: String) async throws(WebhookAddressError) {
        let host = try Self.host(of: url)
        guard !allowsPrivateAddresses else { return }
        guard let addresses = await resolver(host), !addresses.isEmpty else {
            throw WebhookAddressError(.unresolvable, "the host '\(host)' does not resolve")
        }
        for address in addresses {
            let kind = WebhookAddressClass.of(address)
            guard kind == .global else {
                throw WebhookAddressError(
                    .forbiddenAddress,
                    "the host '\(host)' resolves to a \(kind.rawValue) address; webhooks go to public addresses only (STOREGATE_WEBHOOK_ALLOW_PRIVATE=1 allows others)",
                    addressClass: kind
                )
            }
        }
    }

    /// Resolves `host` with the system's `getaddrinfo`, on a dispatch queue (it blocks).
    public static func systemResolve(_ host: String) async -> [[UInt8]]? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(returning: resolveBlocking(host))
            }
        }
    }

    private static func resolveBlocking(_ host: String) -> [[UInt8]]? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(first) }
        var addresses: [[UInt8]] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                if info.pointee.ai_family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                } else if info.pointee.ai_family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                        var raw = pointer.pointee.sin6_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                }
            }
            cursor = info.pointee.ai_next
        }
        return addresses
    }
}
