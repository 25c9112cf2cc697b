import Foundation
import Logging
import ServiceLifecycle
import StoreGateLedger
import Synchronization
import UnixSignals

/// The catalog the service answers entitlements with, replaced whole on reload.
///
/// Entitlements are derived when read, so a reloaded mapping applies to every account at the
/// next request. Product types and subscription groups are the ledger's, fixed when it opened:
/// they decide how receipts are recorded, and change with a restart.
final class CatalogStore: Sendable {
    private let catalog: Mutex<ProductCatalog>
    /// The file it is read from, if any.
    let path: String?

    init(_ catalog: ProductCatalog, path: String?) {
        self.catalog = Mutex(catalog)
        self.path = path
    }

    /// The catalog now.
    var current: ProductCatalog { catalog.withLock { $0 } }

    /// Reads the file again; a catalog that does not load or check keeps the old one.
    ///
    /// - Returns: The new catalog's entitlement count.
    /// - Throws: ``ConfigurationError`` naming the bad entry; the old catalog stays.
    @discardableResult
    func reload() throws(ConfigurationError) -> Int {
        guard let path else { throw ConfigurationError(ServerConfiguration.Setting.productsFile.rawValue, "no products file is configured") }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(ServerConfiguration.Setting.productsFile.rawValue, "cannot read the file \(path)")
        }
        let loaded = try ServerConfiguration.catalog(Array(data))
        catalog.withLock { $0 = loaded }
        return loaded.entitlements.count
    }
}

/// Reloads the catalog on SIGHUP, logging what it did: the new catalog, or why the old one stays.
struct CatalogReloadService: Service {
    let store: CatalogStore
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        await cancelWhenGracefulShutdown {
            for await _ in signals {
                do throws(ConfigurationError) {
                    let count = try store.reload()
                    logger.notice("product catalog reloaded", metadata: ["entitlements": "\(count)", "file": "\(store.path ?? "-")"])
                } catch {
                    logger.error("product catalog not reloaded; the old one stays", metadata: ["reason": "\(error.reason)"])
                }
            }
        }
    }
}
