import Foundation
import HTTPTypes
public import Hummingbird
import HummingbirdAuth
import Logging
import Mustache
import NIOCore
public import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateSync
import StoreGateWorkers
import X509

/// The web console at `/console`: sign-in with an API key that has the `console` permission,
/// then an overview, a search, each account's entitlements and timeline, each transaction with
/// its stored proof re-verified, an inspector for pasted proofs, and the system's state.
///
/// Server-rendered HTML (swift-mustache templates), one small script, one stylesheet: the
/// target's resources (``ConsoleResources``); see ``ConsoleSecurity`` for sessions, CSRF and
/// headers. Everything it reads or does goes through its ``ConsoleReadModel``.
public struct Console: Sendable {
    let model: any ConsoleReadModel
    let security: ConsoleSecurity
    let resources: ConsoleResources

    /// Timeline entries per page.
    static let timelinePage = 100
    /// Days the overview covers.
    static let overviewDays = 90

    /// A console over `model`, its sessions kept in `persist`.
    ///
    /// - Parameters:
    ///   - model: What the console reads and does.
    ///   - persist: Where sessions are kept (the instance's memory in the service).
    public init(model: any ConsoleReadModel, persist: any PersistDriver) {
        self.init(model: model, persist: persist, resources: .shared)
    }

    /// A console over `model` drawing its pages from `resources`.
    init(model: any ConsoleReadModel, persist: any PersistDriver, resources: ConsoleResources) {
        self.model = model
        let settings = model.settings
        self.security = ConsoleSecurity(persist: persist, model: model, lifetime: settings.sessionLifetime, alwaysSecure: settings.secureCookies)
        self.resources = resources
    }

    /// The resource bundle the console's templates, stylesheet and script come from
    /// (`StoreGate_StoreGateConsole.resources`, beside the binary).
    public var resourceBundle: ResourceBundle { resources.bundle }

    /// Why the console cannot draw its pages (its resource bundle not installed beside the
    /// binary, a file of it missing, a template that does not parse); empty when it can. While
    /// there is any, every console route answers 503 and no page is drawn from some of its parts.
    public var resourceProblems: [String] { resources.problems }

    /// The console's routes: the assets and the sign-in are open, every page needs a session.
    ///
    /// - Parameter context: The request context the routes run in.
    /// - Returns: The route table, declared once.
    public func routes<Context: ConsoleRequestContext>(for context: Context.Type = Context.self) -> [ConsoleRoute<Context>] {
        let routes = allRoutes(for: context)
        guard resources.problems.isEmpty else {
            // The same table (405/Allow and the route checks stay as they are), every route
            // answering that the console is not installed.
            return routes.map { route in
                ConsoleRoute(route.method, route.path, session: route.needsSession) { _, _ in Self.filesMissing() }
            }
        }
        return routes
    }

    private func allRoutes<Context: ConsoleRequestContext>(for context: Context.Type) -> [ConsoleRoute<Context>] {
        [
            ConsoleRoute(.get, "/console/assets/console.css", session: false) { _, _ in asset("console.css", type: "text/css; charset=utf-8") },
            ConsoleRoute(.get, "/console/assets/console.js", session: false) { _, _ in asset("console.js", type: "text/javascript; charset=utf-8") },
            ConsoleRoute(.get, "/console/signin", session: false, signInPage),
            ConsoleRoute(.post, "/console/signin", session: false, signIn),
            ConsoleRoute(.post, "/console/signout", session: true, signOut),
            ConsoleRoute(.get, "/console", session: true, overview),
            ConsoleRoute(.get, "/console/analytics/:metric", session: true, analyticsPoint),
            ConsoleRoute(.get, "/console/search", session: true, search),
            ConsoleRoute(.get, "/console/accounts/:account", session: true, account),
            ConsoleRoute(.post, "/console/accounts/:account/grants", session: true, grant),
            ConsoleRoute(.post, "/console/accounts/:account/grants/:grant/revoke", session: true, revokeGrant),
            ConsoleRoute(.post, "/console/accounts/:account/transfers", session: true, transfer),
            ConsoleRoute(.get, "/console/transactions/:environment/:transaction", session: true, transaction),
            ConsoleRoute(.get, "/console/inspect", session: true, inspectPage),
            ConsoleRoute(.post, "/console/inspect", session: true, inspect),
            ConsoleRoute(.get, "/console/system", session: true, system),
            ConsoleRoute(.post, "/console/system/webhooks", session: true, addWebhookEndpoint),
            ConsoleRoute(.post, "/console/system/webhooks/:endpoint/pause", session: true, pauseWebhookEndpoint),
            ConsoleRoute(.post, "/console/system/webhooks/:endpoint/rotate", session: true, rotateWebhookEndpoint),
        ]
    }

    /// The headers every console response carries, set by Hummingbird's middleware: a strict
    /// Content-Security-Policy (no inline script or style, no framing, forms to the console
    /// only) and `nosniff`. The service puts it in front of every console route.
    public func securityHeaders<Context: ConsoleRequestContext>(for context: Context.Type = Context.self) -> ContentSecurityMiddleware<Context> {
        ContentSecurityMiddleware(contentSecurityPolicy: ConsoleSecurity.contentSecurityPolicy)
    }

    /// What guards the pages: a signed-in session.
    ///
    /// - Parameter context: The request context the routes run in.
    /// - Returns: The middleware the service puts in front of every route that needs a session.
    public func authentication<Context: ConsoleRequestContext>(for context: Context.Type = Context.self) -> ConsoleAuthMiddleware<Context> {
        ConsoleAuthMiddleware(security: security)
    }

    // MARK: Pages' shared parts

    struct Layout: Sendable {
        let title: String
        let signedIn: Bool
        let csrf: String
        let keyName: String
        let query: String
        let isOverview: Bool
        let isInspect: Bool
        let isSystem: Bool
        let backend: String
    }

    enum Section { case overview, inspect, system, other }

    func layout(_ title: String, _ context: some ConsoleRequestContext, section: Section = .other, query: String = "") -> Layout {
        Layout(
            title: title, signedIn: context.consoleSession != nil, csrf: context.consoleSession?.csrf ?? "",
            keyName: context.consoleSession?.keyName ?? "", query: query, isOverview: section == .overview,
            isInspect: section == .inspect, isSystem: section == .system, backend: model.settings.backend
        )
    }

    func page(_ template: String, _ view: Any, status: HTTPResponse.Status = .ok, cookies: [Cookie] = []) -> Response {
        guard let html = resources.render(view, template: template) else { return Self.filesMissing() }
        var headers: HTTPFields = [.contentType: "text/html; charset=utf-8"]
        ConsoleSecurity.pageHeaders(&headers)
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie.description)) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    struct ErrorPage: Sendable {
        let layout: Layout
        let heading: String
        let message: String
    }

    func errorPage(_ status: HTTPResponse.Status, _ heading: String, _ message: String, _ context: some ConsoleRequestContext) -> Response {
        page("error", ErrorPage(layout: layout(heading, context), heading: heading, message: message), status: status)
    }

    func ledgerFailure(_ error: LedgerError, _ context: some ConsoleRequestContext) -> Response {
        context.logger.warning("console: the ledger refused a read", metadata: ["ledger.code": "\(error.code)", "ledger.reason": "\(error.reason)"])
        if error.code == .invalidArgument {
            return errorPage(.badRequest, "Not a valid request", error.reason, context)
        }
        return errorPage(.serviceUnavailable, "The ledger did not answer", "\(error.code): try again in a moment.", context)
    }

    /// A stylesheet or script from the resource bundle (``securityHeaders(for:)`` adds `nosniff`).
    func asset(_ name: String, type: String) -> Response {
        guard let bytes = resources.assets[name] else { return Self.filesMissing() }
        return Response(
            status: .ok,
            headers: [.contentType: type, .cacheControl: "public, max-age=3600"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }

    /// The answer while the resource bundle is missing or incomplete: the console cannot draw a
    /// page. It names the bundle, not where it was looked for (the service's log says that).
    static func filesMissing() -> Response {
        var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
        ConsoleSecurity.pageHeaders(&headers)
        let text = "The StoreGate console is unavailable: its files (\(ConsoleResources.bundle.name)) are missing or incomplete "
            + "beside the storegate binary. The service's log says what is missing; the API is not affected.\n"
        return Response(status: .serviceUnavailable, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    static func redirect(_ location: String, cookies: [Cookie] = []) -> Response {
        var headers: HTTPFields = [.location: location, .cacheControl: "no-store"]
        for cookie in cookies { headers.append(HTTPField(name: .setCookie, value: cookie.description)) }
        return Response(status: .seeOther, headers: headers)
    }

    /// A percent-decoded path parameter.
    static func pathParameter(_ name: String, _ context: some ConsoleRequestContext) throws(ConsoleError) -> String {
        guard let raw = context.parameters.get(name), let decoded = PathSegment.decoded(raw) else {
            throw ConsoleError(
                .invalidPathParameter, status: .badRequest, field: name, reason: "the path parameter '\(name)' is not valid percent-encoded text"
            )
        }
        return decoded
    }

    /// A posted form whose CSRF token is the session's (and which no other site sent).
    func checkedForm(_ request: Request, _ context: some ConsoleRequestContext) async throws(ConsoleError) -> ConsoleForm? {
        guard !ConsoleSecurity.isCrossSite(request), let session = context.consoleSession else { return nil }
        let form = try await ConsoleForm(request)
        return ConsoleSecurity.tokensMatch(form["csrf"], session.csrf) ? form : nil
    }

    func forbiddenForm(_ context: some ConsoleRequestContext) -> Response {
        context.logger.notice("console: a form post without a valid CSRF token was refused")
        return errorPage(.forbidden, "Refused", "This form was not sent from this console session (CSRF check). Reload the page and try again.", context)
    }

    // MARK: Sign-in

    struct SignInPage: Sendable {
        let layout: Layout
        let csrf: String
        let next: String
        let message: String?
    }

    /// A `next` path that stays inside the console (never another site).
    static func safeNext(_ value: String?) -> String {
        guard let value, value.hasPrefix("/console"), !value.hasPrefix("//"), !value.contains("\\"),
              !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return "/console" }
        return value
    }

    @Sendable func signInPage(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        if await security.session(request) != nil { return Self.redirect(Self.safeNext(request.uri.queryParameters.get("next"))) }
        return signInForm(request, context, message: nil, status: .ok)
    }

    private func signInForm(_ request: Request, _ context: some ConsoleRequestContext, message: String?, status: HTTPResponse.Status) -> Response {
        // Login CSRF: the form's token must come back with the cookie it was set in.
        let token = ConsoleSecurity.randomToken()
        let view = SignInPage(
            layout: layout("Sign in", context), csrf: token, next: Self.safeNext(request.uri.queryParameters.get("next")), message: message
        )
        return page("signin", view, status: status, cookies: [security.cookie(ConsoleSecurity.signInCookie, value: token, maxAge: 1800, for: request)])
    }

    @Sendable func signIn(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let expected = request.cookies[ConsoleSecurity.signInCookie]?.value ?? ""
        let form = try await ConsoleForm(request, limit: 16 << 10)
        guard !ConsoleSecurity.isCrossSite(request), ConsoleSecurity.tokensMatch(form["csrf"], expected) else {
            context.logger.notice("console: a sign-in without its form token was refused")
            return signInForm(request, context, message: "The sign-in form expired or was not sent from this page. Try again.", status: .forbidden)
        }
        guard let presented = form["key"], let keyName = model.consoleKeyName(presented: presented.trimmingCharacters(in: .whitespaces)) else {
            context.logger.notice("console: a sign-in with a key that is unknown or lacks the console permission was refused")
            return signInForm(request, context, message: "That is not an API key with the console permission.", status: .unauthorized)
        }
        let cookie = try await security.signIn(keyName: keyName, request: request)
        context.logger.info("console: signed in", metadata: ["api_key": "\(keyName)"])
        let clearForm = security.cookie(ConsoleSecurity.signInCookie, value: "", maxAge: 0, for: request)
        return Self.redirect(Self.safeNext(form["next"]), cookies: [cookie, clearForm])
    }

    @Sendable func signOut(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        guard try await checkedForm(request, context) != nil else { return forbiddenForm(context) }
        let cookie = await security.signOut(request)
        return Self.redirect("/console/signin", cookies: [cookie])
    }

    // MARK: Search

    struct SearchPage: Sendable {
        struct AccountHit: Sendable {
            let account: String
            let link: String
            let summary: String
        }

        struct Row: Sendable {
            let id: String
            let link: String
            let original: String
            let productId: String
            let environment: String
            let purchased: String
            let account: String
            let accountLink: String?
        }

        let layout: Layout
        let query: String
        let message: String?
        let accountHit: AccountHit?
        let transactions: [Row]
        let hasTransactions: Bool
        let nothing: Bool
    }

    @Sendable func search(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let query = (request.uri.queryParameters.get("q") ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !query.isEmpty else { return Self.redirect("/console") }
        guard query.utf8.count <= maximumSearchTermLength else {
            return errorPage(.badRequest, "Search", "A search term holds at most \(maximumSearchTermLength) bytes.", context)
        }
        var accountHit: SearchPage.AccountHit?
        var found: [RecordedTransaction] = []
        do throws(LedgerError) {
            if let account = try? AccountID(query) {
                let latest = try await model.timeline(for: account, before: nil, limit: 1)
                let entitlements = try await model.entitlements(for: account, at: model.now())
                let owned = ConsoleViews.owned(entitlements)
                if !latest.isEmpty || !owned.isEmpty {
                    let entitled = owned.filter { $0.tone == "good" }.map(\.productId)
                    accountHit = .init(
                        account: account.rawValue, link: ConsoleViews.accountLink(account),
                        summary: entitled.isEmpty ? "entitled to nothing now" : "entitled to " + entitled.joined(separator: ", ")
                    )
                }
            }
            found = try await model.search(query, limit: 50)
        } catch {
            return ledgerFailure(error, context)
        }
        let rows = found.map { transaction in
            SearchPage.Row(
                id: transaction.transactionId, link: ConsoleViews.transactionLink(transaction.environment, transaction.transactionId),
                original: transaction.originalTransactionId, productId: transaction.productId, environment: transaction.environment.rawValue,
                purchased: ConsoleViews.time(transaction.purchaseDate), account: transaction.account?.rawValue ?? "",
                accountLink: transaction.account.map(ConsoleViews.accountLink)
            )
        }
        return page("search", SearchPage(
            layout: layout("Search", context, query: query), query: query,
            message: found.count == 50 ? "Showing the 50 newest transactions." : nil,
            accountHit: accountHit, transactions: rows, hasTransactions: !rows.isEmpty, nothing: accountHit == nil && rows.isEmpty
        ))
    }

    // MARK: Account

    struct AccountPage: Sendable {
        struct Option: Sendable {
            let value: String
        }

        let layout: Layout
        let account: String
        let now: String
        let entitlements: [ConsoleViews.EntitlementRow]
        let hasEntitlements: Bool
        let grants: [ConsoleViews.GrantRow]
        let hasGrants: Bool
        /// The grant form, for a key with `grants.manage` and a catalog with entitlements.
        let canGrant: Bool
        let grantAction: String
        let entitlementOptions: [Option]
        /// The move form, for a key with `transfers.manage`.
        let canTransfer: Bool
        let transferAction: String
        let environmentOptions: [Option]
        let owned: [ConsoleViews.Owned]
        let hasOwned: Bool
        let balances: [ConsoleViews.Balance]
        let hasBalances: Bool
        let timeline: [ConsoleViews.TimelineEntry]
        let olderLink: String?
        let newestLink: String?
    }

    @Sendable func account(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let account: AccountID
        do {
            account = try AccountID(try Self.pathParameter("account", context))
        } catch {
            return errorPage(.badRequest, "Not an account id", "Account ids are 1 to 256 printable characters.", context)
        }
        var before: Int64?
        if let text = request.uri.queryParameters.get("before") {
            guard let value = Int64(text), value >= 1 else {
                return errorPage(.badRequest, "Not a timeline page", "'before' is a sequence number, at least 1.", context)
            }
            before = value
        }
        let now = model.now()
        let entitlements: Entitlements
        let grants: [EntitlementGrant]
        var events: [LedgerEvent]
        do throws(LedgerError) {
            entitlements = try await model.entitlements(for: account, at: now)
            grants = try await model.grants(for: account)
            events = try await model.timeline(for: account, before: before, limit: Self.timelinePage + 1)
        } catch {
            return ledgerFailure(error, context)
        }
        let catalog = model.catalog()
        let resolved = EntitlementResolver.resolve(entitlements, catalog: catalog, grants: grants, at: now)
        let canManage = model.permissions(ofKeyNamed: context.consoleSession?.keyName ?? "").contains(.manageGrants)
        let hasOlder = events.count > Self.timelinePage
        events = Array(events.prefix(Self.timelinePage))
        let link = ConsoleViews.accountLink(account)
        let owned = ConsoleViews.owned(entitlements)
        let balances = ConsoleViews.balances(entitlements)
        return page("account", AccountPage(
            layout: layout("Account \(account.rawValue)", context), account: account.rawValue, now: ConsoleViews.time(now),
            entitlements: ConsoleViews.entitlementRows(resolved), hasEntitlements: !resolved.isEmpty,
            grants: ConsoleViews.grantRows(grants, account: account, at: now, canManage: canManage), hasGrants: !grants.isEmpty,
            canGrant: canManage && !catalog.entitlements.isEmpty, grantAction: "\(link)/grants",
            entitlementOptions: catalog.entitlements.keys.sorted().map(AccountPage.Option.init),
            canTransfer: canTransfer(context), transferAction: "\(link)/transfers",
            environmentOptions: Self.transferEnvironments.map(AccountPage.Option.init),
            owned: owned, hasOwned: !owned.isEmpty, balances: balances, hasBalances: !balances.isEmpty,
            timeline: events.map(ConsoleViews.timelineEntry),
            olderLink: hasOlder ? events.last.map { "\(link)?before=\($0.sequence)#timeline" } : nil,
            newestLink: before == nil ? nil : "\(link)#timeline"
        ))
    }

    // MARK: Grants

    /// The grant form: grants an entitlement for the chosen duration, in the signed-in key's
    /// name (which needs `grants.manage`), then shows the account again.
    @Sendable func grant(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        guard let form = try await checkedForm(request, context) else { return forbiddenForm(context) }
        guard let keyName = context.consoleSession?.keyName,
              model.permissions(ofKeyNamed: keyName).contains(.manageGrants)
        else {
            return errorPage(.forbidden, "Not allowed", "Granting needs an API key with the grants.manage permission.", context)
        }
        let account: AccountID
        do {
            account = try AccountID(try Self.pathParameter("account", context))
        } catch {
            return errorPage(.badRequest, "Not an account id", "Account ids are 1 to 256 printable characters.", context)
        }
        let entitlement = form["entitlement"] ?? ""
        guard model.catalog().entitlements[entitlement] != nil else {
            return errorPage(.badRequest, "Unknown entitlement", "The catalog defines no entitlement with that name.", context)
        }
        guard let seconds = ISODuration.seconds(form["duration"] ?? "") else {
            return errorPage(.badRequest, "Not a duration", "Choose how long the grant lasts (P1D, P7D, P30D, or an ISO 8601 duration).", context)
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        do throws(LedgerError) {
            let outcome = try await model.grant(GrantRequest(
                account: account, entitlement: entitlement, term: .duration(.seconds(seconds)), reason: reason, grantedBy: keyName,
                idempotencyKey: form["idempotencyKey"] ?? UUID().uuidString.lowercased(), startsAt: model.now()
            ))
            context.logger.info("console: entitlement granted", metadata: ["account": "\(account.rawValue)", "grant.id": "\(outcome.grant.id)"])
        } catch where error.code == .invalidArgument {
            return errorPage(.badRequest, "Not granted", error.reason, context)
        } catch {
            return ledgerFailure(error, context)
        }
        return Self.redirect("\(ConsoleViews.accountLink(account))#grants")
    }

    /// The revoke button of an active grant.
    @Sendable func revokeGrant(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        guard let form = try await checkedForm(request, context) else { return forbiddenForm(context) }
        guard let keyName = context.consoleSession?.keyName,
              model.permissions(ofKeyNamed: keyName).contains(.manageGrants)
        else {
            return errorPage(.forbidden, "Not allowed", "Revoking needs an API key with the grants.manage permission.", context)
        }
        let account: AccountID
        let id: String
        do {
            account = try AccountID(try Self.pathParameter("account", context))
            id = try Self.pathParameter("grant", context)
        } catch {
            return errorPage(.badRequest, "Not a grant", "The path names an account and a grant.", context)
        }
        let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        do throws(LedgerError) {
            _ = try await model.revokeGrant(id, of: account, by: keyName, reason: reason.isEmpty ? "revoked in the console" : reason, at: model.now())
        } catch where error.code == .grantNotFound {
            return errorPage(.notFound, "No such grant", "This account has no grant with that id.", context)
        } catch where error.code == .invalidArgument {
            return errorPage(.badRequest, "Not revoked", error.reason, context)
        } catch {
            return ledgerFailure(error, context)
        }
        return Self.redirect("\(ConsoleViews.accountLink(account))#grants")
    }

    // MARK: Transaction and its proof

    struct TransactionPage: Sendable {
        struct Field: Sendable {
            let name: String
            let value: String
            let link: String?
        }

        let layout: Layout
        let id: String
        let fields: [Field]
        let proofNote: String
        let inspection: ConsoleViews.Inspection?
    }

    @Sendable func transaction(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let environment: AppStoreEnvironment
        let transactionId: String
        do {
            environment = AppStoreEnvironment(rawValue: try Self.pathParameter("environment", context))
            transactionId = try Self.pathParameter("transaction", context)
        } catch {
            return errorPage(.badRequest, "Not a transaction", "The path names an environment and a transaction id.", context)
        }
        let recorded: RecordedTransaction
        var stored: [UInt8]?
        var openFailure: LedgerError?
        do throws(LedgerError) {
            guard let found = try await model.transaction(transactionId, in: environment) else {
                return errorPage(.notFound, "Unknown transaction", "No transaction \(transactionId) is recorded in \(environment.rawValue).", context)
            }
            recorded = found
            if let digest = found.proofDigest {
                do throws(LedgerError) {
                    stored = try await model.storedProof(digest)
                } catch {
                    openFailure = error
                }
            }
        } catch {
            return ledgerFailure(error, context)
        }
        let (note, inspection) = await proofSection(recorded, stored: stored, openFailure: openFailure)
        return transactionPage(recorded, proof: inspection, note: note, context)
    }

    /// What the transaction page says about its proof, and the proof's verification when the
    /// ledger keeps it and it is a kind the inspector verifies.
    private func proofSection(
        _ transaction: RecordedTransaction, stored: [UInt8]?, openFailure: LedgerError?
    ) async -> (String, ConsoleViews.Inspection?) {
        guard let digest = transaction.proofDigest else { return ("No proof digest is stored for this transaction.", nil) }
        let recordedFrom = "Recorded from a \(transaction.source.rawValue) with digest \(ConsoleViews.abbreviated(digest.description)). "
        if let openFailure {
            return (recordedFrom + "The stored proof could not be opened (\(openFailure.code)): \(openFailure.reason).", nil)
        }
        guard let stored else {
            return (recordedFrom + (model.settings.isEncryptionConfigured
                ? "The raw proof is not stored (recorded while no encryption key was configured)."
                : "The raw proof is not stored: the ledger keeps raw proofs only when an encryption key is configured (STOREGATE_LEDGER_KEYS)."), nil)
        }
        let text: String
        switch transaction.source {
        case .appReceipt: text = StoreGateCore.Base64.encode(stored)
        case .signedTransaction, .signedRenewalInfo, .appTransaction, .notification: text = String(decoding: stored, as: UTF8.self)
        default: return (recordedFrom + "It is stored but is not a proof the inspector verifies.", nil)
        }
        let inspection = ConsoleViews.inspection(await model.inspect(text))
        return (recordedFrom + "Re-verified now, with today's settings:", inspection)
    }

    private func transactionPage(_ transaction: RecordedTransaction, proof: ConsoleViews.Inspection?, note: String, _ context: some ConsoleRequestContext) -> Response {
        typealias Field = TransactionPage.Field
        var fields: [Field] = [
            Field(name: "Account", value: transaction.account?.rawValue ?? "unclaimed", link: transaction.account.map(ConsoleViews.accountLink)),
            Field(name: "Environment", value: transaction.environment.rawValue, link: nil),
            Field(name: "Original transaction", value: transaction.originalTransactionId,
                  link: transaction.originalTransactionId == transaction.transactionId ? nil : ConsoleViews.transactionLink(transaction.environment, transaction.originalTransactionId)),
            Field(name: "Bundle id", value: transaction.bundleId, link: nil),
            Field(name: "Product", value: "\(transaction.productId) (\(transaction.productType.rawValue))", link: nil),
            Field(name: "Quantity", value: "\(transaction.quantity)", link: nil),
            Field(name: "Purchased", value: ConsoleViews.time(transaction.purchaseDate), link: nil),
            Field(name: "Expires", value: ConsoleViews.time(transaction.expiresDate), link: nil),
            Field(name: "Revoked", value: transaction.revocationDate.map { "\(ConsoleViews.time($0)), reason \(transaction.revocationReason.map(String.init) ?? "?")" } ?? "no", link: nil),
            Field(name: "Upgraded", value: transaction.isUpgraded ? "yes" : "no", link: nil),
            Field(name: "Observed (Apple's signing date)", value: ConsoleViews.time(transaction.observedAt), link: nil),
            Field(name: "Recorded from", value: transaction.source.rawValue, link: nil),
        ]
        if transaction.productType == .autoRenewable, !transaction.subscriptionGroup.isEmpty { fields.append(Field(name: "Subscription group", value: transaction.subscriptionGroup, link: nil)) }
        if let order = transaction.webOrderLineItemId { fields.append(Field(name: "Web order line item", value: order, link: nil)) }
        if let token = transaction.appAccountToken { fields.append(Field(name: "App account token", value: token.uuidString.lowercased(), link: nil)) }
        return page("transaction", TransactionPage(
            layout: layout("Transaction \(transaction.transactionId)", context), id: transaction.transactionId,
            fields: fields, proofNote: note, inspection: proof
        ))
    }

    // MARK: Inspector

    struct InspectPage: Sendable {
        let layout: Layout
        let inspection: ConsoleViews.Inspection?
    }

    @Sendable func inspectPage(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        page("inspect", InspectPage(layout: layout("Inspector", context, section: .inspect), inspection: nil))
    }

    @Sendable func inspect(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        guard let form = try await checkedForm(request, context) else { return forbiddenForm(context) }
        let proof = form["proof"] ?? ""
        let result = await model.inspect(proof)
        let view = ConsoleViews.inspection(result)
        // What was inspected is never logged, only its verdict.
        context.logger.info("console: inspected a proof", metadata: ["kind": "\(view.kind)", "verdict": "\(view.verdict)"])
        return page("inspect", InspectPage(layout: layout("Inspector", context, section: .inspect), inspection: view))
    }

    // MARK: System

    struct SystemPage: Sendable {
        struct Anchor: Sendable {
            let kind: String
            let subject: String
            let fingerprint: String
        }

        struct Sync: Sendable {
            let bundleId: String
            let environment: String
            let syncedUntil: String
            let recovered: Int64
            let duplicates: Int64
            let rejected: Int64
            let lastError: String
            let hasError: Bool
        }

        struct Worker: Sendable {
            let name: String
            let state: String
            let tone: String
            let rounds: Int
            let failures: Int
            let lastSuccess: String
            let lastError: String
            let isFailing: Bool
        }

        struct Webhook: Sendable {
            let name: String
            let url: String
            let pending: Int
            let delivered: Int
            let failed: Int
            let hasFailed: Bool
            /// `enabled`, `paused`, or `disabled (410 at …)` after a receiver's 410 Gone.
            let state: String
            let isDisabled: Bool
            let secrets: Int
            /// The pause form's action and button (when the signed-in key may manage webhooks).
            let pauseAction: String?
            let pauseLabel: String
            let pauseValue: String
            let rotateAction: String?
        }

        let layout: Layout
        let readiness: String
        let readyTone: String
        let backend: String
        let database: String
        let apps: String
        let environments: String
        let workers: [Worker]
        let hasWorkers: Bool
        let warnings: [String]
        /// Parts of the page the ledger could not read.
        let failures: [String]
        let anchors: [Anchor]
        let webhooks: [Webhook]
        let hasWebhooks: Bool
        /// Whether the signed-in key may add, pause and rotate endpoints (`webhooks.manage`).
        let canManageWebhooks: Bool
        let syncState: String
        let syncs: [Sync]
        let hasSyncs: Bool
        let consumption: String
        let consumptionFailed: Bool
    }

    @Sendable func system(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let settings = model.settings
        let readiness = await model.readiness(logger: context.logger)
        let database = readiness.databaseError.map { "failing (\($0.code))" } ?? "answers and takes writes"
        let store = model.trustStore
        let loaded = Set(store.appleRoots.map(\.fingerprint))
        let pinned = [(TrustStore.appleRootCA, "Apple Root CA"), (TrustStore.appleRootCAG3, "Apple Root CA - G3")].filter { !loaded.contains($0.0) }.map {
            SystemPage.Anchor(kind: "Apple root (pinned by fingerprint)", subject: $0.1, fingerprint: $0.0.description)
        }
        let anchors = pinned
            + store.appleRoots.map { SystemPage.Anchor(kind: "Apple root (pinned, loaded)", subject: $0.certificate.subject.description, fingerprint: $0.fingerprint.description) }
            + store.optInAnchors.map { SystemPage.Anchor(kind: "opt-in anchor", subject: $0.certificate.subject.description, fingerprint: $0.fingerprint.description) }
        // A part the ledger could not read is shown as a failure, never as zeros.
        var failures: [String] = []
        func failed(_ what: String, _ error: LedgerError) {
            failures.append("\(what): the ledger failed (\(error.code))")
            context.logger.warning("console: a system read failed", metadata: ["part": "\(what)", "ledger.code": "\(error.code)", "ledger.reason": "\(error.reason)"])
        }
        var counts: [String: [EventDelivery.Status: Int]] = [:]
        var states: [String: WebhookEndpointState] = [:]
        var stored: [StoredWebhookEndpoint] = []
        do throws(LedgerError) {
            stored = try await model.webhookEndpoints()
            if !stored.isEmpty {
                counts = try await model.deliveryCounts()
                states = try await model.webhookEndpointStates()
            }
        } catch {
            failed("webhook endpoints", error)
        }
        let canManageWebhooks = mayManageWebhooks(context)
        let webhooks = stored.map { endpoint in
            let count = counts[endpoint.name] ?? [:]
            var state: String
            switch states[endpoint.name] ?? .enabled {
            case .enabled: state = "enabled"
            case .disabled(let disabling?): state = "disabled (\(disabling.status) at \(ConsoleViews.time(disabling.disabledDate)))"
            case .disabled(nil): state = "disabled"
            }
            if endpoint.isPaused { state = "paused, " + state }
            let action = "/console/system/webhooks/" + ConsoleViews.segment(endpoint.name)
            return SystemPage.Webhook(
                name: endpoint.name, url: ConsoleViews.abbreviated(endpoint.redactedURL, keep: 24), pending: count[.pending] ?? 0,
                delivered: count[.delivered] ?? 0, failed: count[.failed] ?? 0, hasFailed: (count[.failed] ?? 0) > 0,
                state: state, isDisabled: (states[endpoint.name]?.isDisabled ?? false) || endpoint.isPaused, secrets: endpoint.secrets.count,
                pauseAction: canManageWebhooks ? action + "/pause" : nil, pauseLabel: endpoint.isPaused ? "Resume" : "Pause",
                pauseValue: endpoint.isPaused ? "0" : "1", rotateAction: canManageWebhooks ? action + "/rotate" : nil
            )
        }
        let syncs: [SystemPage.Sync]
        var statuses: [NotificationSyncStatus] = []
        do throws(LedgerError) {
            statuses = try await model.syncStatuses(at: model.now())
        } catch {
            failed("App Store sync", error)
        }
        syncs = statuses.map { status in
            SystemPage.Sync(
                bundleId: status.bundleId, environment: status.environment.rawValue,
                syncedUntil: status.syncedUntil.map { ConsoleViews.time($0) } ?? "not yet", recovered: status.recovered,
                duplicates: status.duplicates, rejected: status.rejected,
                lastError: status.lastError.map { "\($0.code) at \(ConsoleViews.time($0.at))" } ?? "none", hasError: status.lastError != nil
            )
        }
        var requests = ConsumptionResponder.Summary()
        do throws(LedgerError) {
            requests = try await model.consumptionSummary()
        } catch {
            failed("consumption requests", error)
        }
        let answered = settings.answersConsumption
        let consumption = (answered ? "Refund-time consumption requests are answered from the ledger" : "Consumption requests are not answered (STOREGATE_CONSUMPTION is off)")
            + ": \(requests[.sent]) sent, \(requests[.pending]) pending, \(requests[.expired]) expired, \(requests[.failed]) failed"
            + (requests.lastError.map { " — last error: \($0)" } ?? "")
            + (requests.adjusted > 0
                ? "; \(requests.adjusted) answer(s) changed to meet Apple's rules — latest, transaction \(requests.lastAdjustmentTransactionId ?? "?"): \(requests.lastAdjustment ?? "")"
                : "")
            + "."
        let syncState = settings.syncInterval.map { "Recovering missed notifications from Apple's history every \($0.components.seconds) s." }
            ?? "Off: set the App Store Server API credentials (STOREGATE_APPSTORE_*) to recover missed notifications."
        let ready = readiness.isReady
        let workers = readiness.workers.map { worker in
            SystemPage.Worker(
                name: worker.name, state: worker.health.rawValue,
                tone: worker.health == .stalled ? "bad" : worker.health == .ok ? "good" : "neutral",
                rounds: worker.rounds, failures: worker.failures, lastSuccess: worker.lastSuccessAt.map { ConsoleViews.time($0) } ?? "not yet",
                lastError: worker.consecutiveFailures > 0 ? worker.lastError ?? "" : "none", isFailing: worker.consecutiveFailures > 0
            )
        }
        return page("system", SystemPage(
            layout: layout("System", context, section: .system), readiness: ready ? "ready" : "not ready", readyTone: ready ? "good" : "bad",
            backend: settings.backend, database: database,
            apps: settings.bundleIds.isEmpty ? "none" : settings.bundleIds.joined(separator: ", "),
            environments: settings.environments.map(\.rawValue).sorted().joined(separator: ", "),
            workers: workers, hasWorkers: !workers.isEmpty,
            warnings: settings.startupWarnings, failures: failures, anchors: anchors, webhooks: webhooks, hasWebhooks: !webhooks.isEmpty,
            canManageWebhooks: canManageWebhooks,
            syncState: syncState, syncs: syncs, hasSyncs: !syncs.isEmpty, consumption: consumption,
            consumptionFailed: requests[.failed] + requests[.expired] > 0
        ))
    }
}
