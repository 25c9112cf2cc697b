import ArgumentParser
import Foundation
import StoreGateHTTP

/// Calls a running StoreGate service with the API key from `STOREGATE_API_KEY` (never a flag,
/// which other users of the machine could read), prints its JSON reply, and exits 1 when the
/// service refused or failed: the subcommands that drive a service (`sync`, `grant`, `transfer`).
struct ServiceClient {
    /// The service's base URL.
    let url: String
    /// Seconds to wait for the reply.
    let timeout: Int

    static func percentEncoded(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? value
    }

    /// Sends the request, prints the reply's body.
    ///
    /// - Throws: `ExitCode(1)` when the service answers other than 2xx or cannot be reached.
    func call(method: String, path: String, body: [String: Any]? = nil) async throws {
        guard let key = ProcessInfo.processInfo.environment["STOREGATE_API_KEY"], !key.isEmpty else {
            throw CLIError("set STOREGATE_API_KEY to an API key of the service")
        }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        var headers: [TransportRequest.Header] = [.init("Authorization", "Bearer " + key), .init("Accept", "application/json")]
        var bytes: [UInt8] = []
        if let body {
            bytes = Array(try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys]))
            headers.append(.init("Content-Type", "application/json"))
        }
        let transport = AsyncHTTPClientTransport(
            configuration: .init(connectTimeout: .seconds(10), readTimeout: .seconds(max(1, timeout))), logger: Output.logger
        )
        let outcome: Result<TransportResponse, HTTPTransportError>
        do {
            outcome = .success(try await transport.send(
                TransportRequest(method: method, url: base + path, headers: headers, body: body == nil ? nil : bytes),
                deadline: .now + .seconds(max(1, timeout))
            ))
        } catch {
            outcome = .failure(error)
        }
        try? await transport.shutdown()
        switch outcome {
        case .success(let response):
            print(String(decoding: response.body, as: UTF8.self))
            guard (200..<300).contains(response.status) else {
                Output.error("the service answered \(response.status)")
                throw ExitCode(1)
            }
        case .failure(let error):
            Output.error("cannot reach \(base): \(error.reason)")
            throw ExitCode(1)
        }
    }
}
