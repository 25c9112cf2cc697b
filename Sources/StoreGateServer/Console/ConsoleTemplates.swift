/// The console's Mustache templates, compiled into the binary (nothing read at run time).
///
/// Every `{{value}}` is HTML-escaped by Mustache; the one triple-mustache insert is a chart's
/// SVG (``ConsoleViews/chart(title:values:tone:summary:)``, numbers and escaped labels only).
/// No inline script or style: the Content-Security-Policy forbids both.
enum ConsoleTemplates {
    static let all: [String: String] = [
        "header": header, "footer": footer, "signin": signIn, "overview": overview, "search": search,
        "account": account, "transaction": transaction, "inspect": inspect, "inspection": inspection,
        "system": system, "error": error, "secret": secret, "drilldown": drillDown,
    ]

    static let header = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{#layout}}{{title}}{{/layout}} · StoreGate console</title>
        <link rel="stylesheet" href="/console/assets/console.css">
        <script src="/console/assets/console.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        {{#layout}}{{#signedIn}}
        <header class="top">
          <a class="brand" href="/console">StoreGate</a>
          <nav aria-label="Console">
            <a href="/console"{{#isOverview}} aria-current="page"{{/isOverview}}>Overview</a>
            <a href="/console/inspect"{{#isInspect}} aria-current="page"{{/isInspect}}>Inspector</a>
            <a href="/console/system"{{#isSystem}} aria-current="page"{{/isSystem}}>System</a>
          </nav>
          <form class="search" role="search" action="/console/search" method="get">
            <label for="q" class="visually-hidden">Search by account, transaction id, original transaction id, app account token or web order line item id</label>
            <input id="q" name="q" type="search" value="{{query}}" placeholder="account, transaction, token…" maxlength="256" required>
            <button type="submit">Search</button>
          </form>
          <form class="signout" action="/console/signout" method="post">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <button type="submit" class="quiet">Sign out <span class="who">({{keyName}})</span></button>
          </form>
        </header>
        {{/signedIn}}{{/layout}}
        <main id="main" tabindex="-1">
        """

    static let footer = """
        </main>
        <footer class="bottom">StoreGate · {{#layout}}{{backend}}{{/layout}} ledger · times in UTC</footer>
        </body>
        </html>
        """

    static let signIn = """
        {{> header}}
        <section class="card narrow">
          <h1>Sign in to the StoreGate console</h1>
          <p>Use an API key that has the <code>console</code> permission. The key is checked and forgotten: the console keeps only a session.</p>
          {{#message}}<p class="alert bad" role="alert">{{message}}</p>{{/message}}
          <form action="/console/signin" method="post" class="stack">
            <input type="hidden" name="csrf" value="{{csrf}}">
            <input type="hidden" name="next" value="{{next}}">
            <label for="key">API key</label>
            <input id="key" name="key" type="password" autocomplete="current-password" required maxlength="512" autofocus>
            <button type="submit">Sign in</button>
          </form>
        </section>
        {{> footer}}
        """

    static let overview = """
        {{> header}}
        <h1>Overview</h1>
        <form class="controls card" action="/console" method="get" aria-label="What the charts show">
          <input type="hidden" name="was" value="{{preset}}">
          <label>Range <select name="range">{{#rangeOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/rangeOptions}}</select></label>
          <label>From <input type="date" name="from" value="{{from}}"></label>
          <label>To <input type="date" name="to" value="{{to}}"></label>
          <label>Per <select name="interval">{{#intervalOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/intervalOptions}}</select></label>
          <label>Split by <select name="groupBy">{{#groupOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/groupOptions}}</select></label>
          <label>Environment <select name="environment">{{#environmentOptions}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/environmentOptions}}</select></label>
          <button type="submit">Show</button>
        </form>
        <p class="lede">{{rangeText}}. From the ledger's daily rollups (the figures of <code>GET /v1/analytics</code>); amounts in their own currency. Select a bar, or a value in a chart's table, to list the transactions behind it.</p>
        <div class="metric-grid">
        {{#metricCharts}}
          <section class="card metric-card" id="{{id}}" aria-labelledby="{{id}}-h">
            <h2 id="{{id}}-h">{{title}} <span class="muted small">{{subtitle}}</span></h2>
            <p class="figure">{{headline}}</p>
            {{#hasLegend}}<ul class="legend">{{#legend}}<li><span class="swatch {{swatch}}" aria-hidden="true"></span>{{name}}</li>{{/legend}}</ul>{{/hasLegend}}
            {{{svg}}}
            {{#note}}<p class="muted small">{{note}}</p>{{/note}}
            <details class="values">
              <summary>Table of values</summary>
              <div class="scroll"><table>
                <thead><tr><th scope="col">Period</th>{{#headers}}<th scope="col">{{name}}</th>{{/headers}}</tr></thead>
                <tbody>{{#rows}}<tr><th scope="row">{{period}}</th>{{#cells}}<td><a href="{{link}}">{{text}}</a></td>{{/cells}}</tr>{{/rows}}</tbody>
              </table></div>
            </details>
          </section>
        {{/metricCharts}}
        </div>
        <h2 class="section">Ledger activity</h2>
        <p class="lede">The last {{days}} days, per UTC day, from the ledger's own records.</p>
        <div class="grid">
        {{#charts}}
          <section class="card chart-card">
            <h2>{{title}}</h2>
            <p class="figure">{{total}}</p>
            {{{svg}}}
          </section>
        {{/charts}}
        </div>
        {{> footer}}
        """

    static let drillDown = """
        {{> header}}
        <h1>{{title}}: the transactions behind the point</h1>
        <p class="lede">{{point}} — <strong>{{summary}}</strong></p>
        <p class="muted">{{formula}} Each row is one transaction's figure, by the rules in docs/analytics.md.</p>
        {{#truncated}}<p class="alert warn" role="status">{{truncated}}</p>{{/truncated}}
        {{^hasRows}}<p class="alert neutral" role="status">No transaction is behind this point.</p>{{/hasRows}}
        {{#hasRows}}
        <section class="card">
          <div class="scroll"><table class="drilldown">
            <thead><tr><th scope="col">Day</th><th scope="col">Counted as</th><th scope="col"></th><th scope="col">Transaction</th><th scope="col">Account</th><th scope="col">Product</th><th scope="col">Storefront</th><th scope="col">Offer</th><th scope="col">Figure</th></tr></thead>
            <tbody>{{#rows}}<tr><td>{{day}}</td><td>{{countedAs}}</td><td><span class="badge {{tone}}">{{role}}</span></td><td><a href="{{transactionLink}}">{{transactionId}}</a></td><td>{{#accountLink}}<a href="{{accountLink}}">{{account}}</a>{{/accountLink}}{{^accountLink}}{{account}}{{/accountLink}}</td><td>{{productId}}</td><td>{{storefront}}</td><td>{{offer}}</td><td>{{figure}}</td></tr>{{/rows}}</tbody>
          </table></div>
        </section>
        {{/hasRows}}
        <p><a href="{{back}}">Back to the overview</a></p>
        {{> footer}}
        """

    static let search = """
        {{> header}}
        <h1>Search</h1>
        <p class="lede">Results for <strong>{{query}}</strong></p>
        {{#message}}<p class="alert warn" role="status">{{message}}</p>{{/message}}
        {{#accountHit}}
        <section class="card">
          <h2>Account</h2>
          <p><a class="big" href="{{link}}">{{account}}</a> — {{summary}}</p>
        </section>
        {{/accountHit}}
        {{#hasTransactions}}
        <section class="card">
          <h2>Transactions</h2>
          <div class="scroll"><table>
            <thead><tr><th scope="col">Transaction</th><th scope="col">Original</th><th scope="col">Product</th><th scope="col">Environment</th><th scope="col">Purchased</th><th scope="col">Account</th></tr></thead>
            <tbody>
            {{#transactions}}
              <tr><td><a href="{{link}}">{{id}}</a></td><td>{{original}}</td><td>{{productId}}</td><td>{{environment}}</td><td>{{purchased}}</td>
                <td>{{#accountLink}}<a href="{{accountLink}}">{{account}}</a>{{/accountLink}}{{^accountLink}}unclaimed{{/accountLink}}</td></tr>
            {{/transactions}}
            </tbody>
          </table></div>
        </section>
        {{/hasTransactions}}
        {{#nothing}}<p class="alert neutral" role="status">Nothing matches: no account with that id has records, and no transaction, family, web order or app account token has that value.</p>{{/nothing}}
        {{> footer}}
        """

    static let account = """
        {{> header}}
        <h1>Account <span class="mono">{{account}}</span></h1>
        <p class="lede">What it owns at {{now}}, and why.</p>
        {{#hasEntitlements}}
        <section class="card">
          <h2 id="entitlements">Entitlements</h2>
          <div class="scroll"><table>
            <thead><tr><th scope="col">Entitlement</th><th scope="col">State</th><th scope="col">Until</th><th scope="col">Because of</th><th scope="col">Details</th></tr></thead>
            <tbody>{{#entitlements}}<tr><td class="product">{{identifier}}</td><td><span class="badge {{tone}}">{{status}}</span></td><td>{{expires}}</td><td>{{#sourceLink}}<a href="{{sourceLink}}">{{sourceLabel}}</a>{{/sourceLink}}{{^sourceLink}}{{sourceLabel}}{{/sourceLink}}</td><td class="muted">{{detail}} {{others}}</td></tr>{{/entitlements}}</tbody>
          </table></div>
        </section>
        {{/hasEntitlements}}
        <section class="card">
          <h2 id="grants">Grants</h2>
          {{^hasGrants}}<p class="muted">No entitlement was granted by hand.</p>{{/hasGrants}}
          {{#hasGrants}}
          <div class="scroll"><table>
            <thead><tr><th scope="col">Grant</th><th scope="col">Entitlement</th><th scope="col">State</th><th scope="col">From</th><th scope="col">Until</th><th scope="col">Why, by whom</th><th scope="col"></th></tr></thead>
            <tbody>{{#grants}}<tr><td class="mono">{{shortId}}</td><td>{{entitlement}}</td><td><span class="badge {{tone}}">{{status}}</span></td><td>{{starts}}</td><td>{{expires}}</td><td>{{reason}} <span class="muted">— {{grantedBy}}</span>{{#revocation}}<br><span class="muted">{{revocation}}</span>{{/revocation}}</td><td>{{#revokeAction}}<form method="post" action="{{revokeAction}}" class="inline"><input type="hidden" name="csrf" value="{{layout.csrf}}"><input type="text" name="reason" aria-label="Why revoke {{shortId}}" placeholder="why" required maxlength="512"><button type="submit">Revoke</button></form>{{/revokeAction}}</td></tr>{{/grants}}</tbody>
          </table></div>
          {{/hasGrants}}
          {{#canGrant}}
          <form method="post" action="{{grantAction}}" class="grant-form">
            <input type="hidden" name="csrf" value="{{layout.csrf}}">
            <label>Entitlement <select name="entitlement" required>{{#entitlementOptions}}<option>{{value}}</option>{{/entitlementOptions}}</select></label>
            <label>For <select name="duration"><option value="P1D">1 day</option><option value="P7D" selected>7 days</option><option value="P30D">30 days</option><option value="P365D">365 days</option></select></label>
            <label>Why <input type="text" name="reason" required maxlength="512" placeholder="support ticket, promotion…"></label>
            <button type="submit">Grant</button>
          </form>
          {{/canGrant}}
        </section>
        {{#canTransfer}}
        <section class="card">
          <h2 id="transfers">Move a purchase here</h2>
          <p class="muted">Moves every transaction of a purchase family (its renewals, its consumable units) from the account that owns it to this one; both accounts' timelines record who moved it and why. A purchase bound to another account's appAccountToken never moves.</p>
          <form method="post" action="{{transferAction}}" class="grant-form transfer-form">
            <input type="hidden" name="csrf" value="{{layout.csrf}}">
            <label>Environment <select name="environment">{{#environmentOptions}}<option>{{value}}</option>{{/environmentOptions}}</select></label>
            <label>Original transaction id <input type="text" name="originalTransactionId" required maxlength="256" class="mono"></label>
            <label>Why <input type="text" name="reason" required maxlength="512" placeholder="support ticket, new account…"></label>
            <button type="submit">Move here</button>
          </form>
        </section>
        {{/canTransfer}}
        {{^hasOwned}}<p class="alert neutral" role="status">No purchase recorded for this account.</p>{{/hasOwned}}
        {{#hasOwned}}
        <section class="card">
          <h2>Products</h2>
          <ul class="owned">
          {{#owned}}
            <li class="owned-item">
              <div class="owned-head"><span class="product">{{productId}}</span> <span class="badge {{tone}}">{{status}}</span> <span class="muted">{{kind}}</span></div>
              {{#detail}}<p class="muted">{{detail}}</p>{{/detail}}
              <details>
                <summary>Why: {{transactionCount}} transaction(s){{#hasNotifications}}, notifications{{/hasNotifications}}</summary>
                <div class="scroll"><table>
                  <thead><tr><th scope="col">Transaction</th><th scope="col">Purchased</th><th scope="col">Expires</th><th scope="col">Revoked</th><th scope="col">Proof</th></tr></thead>
                  <tbody>{{#transactions}}<tr><td><a href="{{link}}">{{id}}</a></td><td>{{purchased}}</td><td>{{expires}}</td><td>{{revoked}}</td><td>{{source}}</td></tr>{{/transactions}}</tbody>
                </table></div>
                {{#hasNotifications}}<ul class="plain">{{#notifications}}<li>Notification {{type}}, signed {{signed}} <span class="mono muted">{{uuid}}</span></li>{{/notifications}}</ul>{{/hasNotifications}}
              </details>
            </li>
          {{/owned}}
          </ul>
        </section>
        {{/hasOwned}}
        {{#hasBalances}}
        <section class="card">
          <h2>Consumable balances</h2>
          <div class="scroll"><table>
            <thead><tr><th scope="col">Product</th><th scope="col">Available</th><th scope="col">Purchased</th><th scope="col">Consumed</th><th scope="col">Refunded</th><th scope="col">Refund debt</th></tr></thead>
            <tbody>{{#balances}}<tr><td>{{productId}}</td><td><strong>{{available}}</strong></td><td>{{purchased}}</td><td>{{consumed}}</td><td>{{refunded}}</td><td>{{refundDebt}}</td></tr>{{/balances}}</tbody>
          </table></div>
        </section>
        {{/hasBalances}}
        <section class="card">
          <h2 id="timeline">Timeline</h2>
          <p class="muted">Newest first: purchases, renewals, state changes, notifications, consumption, refunds and refusals.</p>
          {{^timeline}}<p>No events on this page.</p>{{/timeline}}
          <ol class="timeline" aria-labelledby="timeline">
          {{#timeline}}
            <li class="event {{tone}}">
              <div class="event-head"><time>{{time}}</time> <strong>{{title}}</strong> <span class="product">{{productId}}</span> {{#entitled}}<span class="muted">→ {{entitled}}</span>{{/entitled}}</div>
              <p class="muted">{{detail}}{{#transactionLink}} · <a href="{{transactionLink}}">transaction {{transactionLabel}}</a>{{/transactionLink}} <span class="seq">#{{sequence}}</span></p>
            </li>
          {{/timeline}}
          </ol>
          <nav class="pager" aria-label="Timeline pages">
            {{#newestLink}}<a href="{{newestLink}}">Newest</a>{{/newestLink}}
            {{#olderLink}}<a href="{{olderLink}}" rel="next">Older events</a>{{/olderLink}}
          </nav>
        </section>
        {{> footer}}
        """

    static let transaction = """
        {{> header}}
        <h1>Transaction <span class="mono">{{id}}</span></h1>
        <section class="card">
          <h2>As recorded</h2>
          <dl class="fields">
          {{#fields}}<dt>{{name}}</dt><dd>{{#link}}<a href="{{link}}">{{value}}</a>{{/link}}{{^link}}{{value}}{{/link}}</dd>{{/fields}}
          </dl>
        </section>
        <section class="card">
          <h2>Proof</h2>
          <p class="muted">{{proofNote}}</p>
          {{#inspection}}{{> inspection}}{{/inspection}}
        </section>
        {{> footer}}
        """

    static let inspect = """
        {{> header}}
        <h1>Inspector</h1>
        <p class="lede">Paste a base64 app receipt or a StoreKit 2 JWS (or choose a file). Every verification step is shown; nothing is recorded.</p>
        <form action="/console/inspect" method="post" class="stack card">
          <input type="hidden" name="csrf" value="{{#layout}}{{csrf}}{{/layout}}">
          <label for="proof">Receipt or JWS</label>
          <textarea id="proof" name="proof" rows="8" required spellcheck="false" autocomplete="off"></textarea>
          <label for="proof-file">Or a file (a receipt's DER bytes, base64 text or a JWS)</label>
          <input id="proof-file" type="file" data-fills="proof">
          <button type="submit">Inspect</button>
        </form>
        {{#inspection}}
        <section class="card" aria-live="polite">
          {{> inspection}}
        </section>
        {{/inspection}}
        {{> footer}}
        """

    static let inspection = """
        <h2>Verdict: <span class="badge {{#valid}}good{{/valid}}{{^valid}}bad{{/valid}}">{{verdict}}</span> <span class="muted">{{kind}}</span></h2>
        <p>{{summary}}</p>
        <h3>Steps</h3>
        <div class="scroll"><table class="steps">
          <thead><tr><th scope="col">Result</th><th scope="col">Step</th><th scope="col">Detail</th></tr></thead>
          <tbody>{{#steps}}<tr class="{{tone}}"><td><span class="badge {{tone}}">{{status}}</span></td><td>{{name}}</td><td class="detail">{{detail}}</td></tr>{{/steps}}</tbody>
        </table></div>
        {{#hasChecks}}
        <h3>Expectations</h3>
        <div class="scroll"><table class="steps">
          <thead><tr><th scope="col">Result</th><th scope="col">Expectation</th><th scope="col">Found</th></tr></thead>
          <tbody>{{#checks}}<tr class="{{tone}}"><td><span class="badge {{tone}}">{{status}}</span></td><td>{{name}}</td><td class="detail">{{detail}}</td></tr>{{/checks}}</tbody>
        </table></div>
        {{/hasChecks}}
        {{#hasChain}}
        <h3>Certificate chain</h3>
        <ol class="chain">{{#chain}}<li><strong>{{role}}</strong> {{subject}}<br><span class="muted">issuer {{issuer}} · serial {{serial}} · valid {{validity}}</span><br><span class="mono muted">SHA-256 {{sha256}}</span></li>{{/chain}}</ol>
        {{/hasChain}}
        {{#hasUnverifiedSubjects}}
        <h3>{{unverifiedHeading}}</h3>
        <ol class="chain">{{#unverifiedSubjects}}<li>{{.}}</li>{{/unverifiedSubjects}}</ol>
        {{/hasUnverifiedSubjects}}
        {{#hasDecoded}}
        <h3>Decoded fields (Apple's names){{^valid}}: from a proof that is not valid, not to be trusted{{/valid}}</h3>
        <pre class="json">{{decoded}}</pre>
        {{/hasDecoded}}
        """

    static let system = """
        {{> header}}
        <h1>System</h1>
        <section class="card">
          <h2>Readiness</h2>
          <p><span class="badge {{readyTone}}">{{readiness}}</span> ledger <strong>{{backend}}</strong>: {{database}}</p>
          <p class="muted">Accepted apps: {{apps}} · environments: {{environments}}</p>
          {{#hasWorkers}}
          <h3>Background workers</h3>
          <div class="scroll"><table>
            <thead><tr><th scope="col">Worker</th><th scope="col">State</th><th scope="col">Rounds</th><th scope="col">Failed</th><th scope="col">Last completed</th><th scope="col">Last error</th></tr></thead>
            <tbody>{{#workers}}<tr><td class="mono">{{name}}</td><td><span class="badge {{tone}}">{{state}}</span></td><td>{{rounds}}</td><td>{{failures}}</td><td>{{lastSuccess}}</td><td{{#isFailing}} class="bad"{{/isFailing}}>{{lastError}}</td></tr>{{/workers}}</tbody>
          </table></div>
          {{/hasWorkers}}
        </section>
        <section class="card">
          {{#failures.first}}<h2>Failures</h2>
          <ul>{{#failures}}<li class="bad-text">{{.}}</li>{{/failures}}</ul>{{/failures.first}}
          <h2>Configuration warnings</h2>
          {{^warnings}}<p>None.</p>{{/warnings}}
          <ul>{{#warnings}}<li class="warn-text">{{.}}</li>{{/warnings}}</ul>
        </section>
        <section class="card">
          <h2>Trust anchors</h2>
          <div class="scroll"><table>
            <thead><tr><th scope="col">Kind</th><th scope="col">Subject</th><th scope="col">SHA-256 fingerprint</th></tr></thead>
            <tbody>{{#anchors}}<tr><td>{{kind}}</td><td>{{subject}}</td><td class="mono">{{fingerprint}}</td></tr>{{/anchors}}</tbody>
          </table></div>
        </section>
        <section class="card" id="webhooks">
          <h2>Webhook endpoints</h2>
          {{^webhooks}}<p>No webhook endpoint yet (add one below, POST /v1/webhooks/endpoints, or STOREGATE_WEBHOOKS_FILE).</p>{{/webhooks}}
          {{#hasWebhooks}}
          <div class="scroll"><table>
            <thead><tr><th scope="col">Endpoint</th><th scope="col">URL</th><th scope="col">State</th><th scope="col">Pending</th><th scope="col">Delivered</th><th scope="col">Failed</th><th scope="col">Secrets</th><th scope="col">Actions</th></tr></thead>
            <tbody>{{#webhooks}}<tr><td>{{name}}</td><td class="mono">{{url}}</td><td{{#isDisabled}} class="bad"{{/isDisabled}}>{{state}}</td><td>{{pending}}</td><td>{{delivered}}</td><td{{#hasFailed}} class="bad"{{/hasFailed}}>{{failed}}</td><td>{{secrets}}</td><td>{{#pauseAction}}<form method="post" action="{{pauseAction}}" class="inline"><input type="hidden" name="csrf" value="{{layout.csrf}}"><input type="hidden" name="paused" value="{{pauseValue}}"><button type="submit">{{pauseLabel}}</button></form>{{/pauseAction}}{{#rotateAction}} <form method="post" action="{{rotateAction}}" class="inline"><input type="hidden" name="csrf" value="{{layout.csrf}}"><button type="submit">Rotate secret</button></form>{{/rotateAction}}</td></tr>{{/webhooks}}</tbody>
          </table></div>
          {{/hasWebhooks}}
          {{#canManageWebhooks}}
          <h3>Add an endpoint</h3>
          <form method="post" action="/console/system/webhooks">
            <input type="hidden" name="csrf" value="{{layout.csrf}}">
            <label>Name <input type="text" name="name" required maxlength="64" pattern="[A-Za-z0-9._-]{1,64}"></label>
            <label>URL <input type="url" name="url" required maxlength="2048" placeholder="https://…"></label>
            <label>Event types <input type="text" name="types" placeholder="all (or: transaction.revoked, grant.created)"></label>
            <button type="submit">Add</button>
          </form>
          {{/canManageWebhooks}}
        </section>
        <section class="card">
          <h2>App Store sync</h2>
          <p>{{syncState}}</p>
          {{#hasSyncs}}
          <div class="scroll"><table>
            <thead><tr><th scope="col">App</th><th scope="col">Environment</th><th scope="col">Synced until</th><th scope="col">Recovered</th><th scope="col">Already stored</th><th scope="col">Refused</th><th scope="col">Last error</th></tr></thead>
            <tbody>{{#syncs}}<tr><td>{{bundleId}}</td><td>{{environment}}</td><td>{{syncedUntil}}</td><td>{{recovered}}</td><td>{{duplicates}}</td><td>{{rejected}}</td><td{{#hasError}} class="bad"{{/hasError}}>{{lastError}}</td></tr>{{/syncs}}</tbody>
          </table></div>
          {{/hasSyncs}}
          <p{{#consumptionFailed}} class="bad"{{/consumptionFailed}}>{{consumption}}</p>
        </section>
        {{> footer}}
        """

    static let secret = """
        {{> header}}
        <section class="card narrow">
          <h1>{{heading}}</h1>
          <p>{{message}}</p>
          <p><code class="mono">{{secret}}</code></p>
          <p><a href="/console/system#webhooks">Back to the system page</a></p>
        </section>
        {{> footer}}
        """

    static let error = """
        {{> header}}
        <section class="card narrow">
          <h1>{{heading}}</h1>
          <p class="alert bad" role="alert">{{message}}</p>
          <p><a href="/console">Back to the overview</a></p>
        </section>
        {{> footer}}
        """
}
