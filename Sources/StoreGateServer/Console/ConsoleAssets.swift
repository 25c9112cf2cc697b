/// The console's stylesheet and script, compiled into the binary and served from
/// `/console/assets/` (the Content-Security-Policy allows only these, from the same origin).
enum ConsoleAssets {
    static let stylesheet = """
        :root{--bg:#f6f7f9;--card:#fff;--ink:#1c2330;--muted:#5b6575;--line:#dde2ea;--accent:#0b5cad;--good:#17733a;--good-bg:#e3f4e8;--bad:#b3261e;--bad-bg:#fbe7e6;--warn:#8a5a00;--warn-bg:#fff3d6;--neutral-bg:#eef1f5}
        *{box-sizing:border-box}
        html{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--ink);background:var(--bg)}
        body{margin:0}
        a{color:var(--accent)}
        a:focus-visible,button:focus-visible,input:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
        .skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}
        .skip:focus{left:.5rem}
        .visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
        .top{display:flex;flex-wrap:wrap;gap:.75rem 1.25rem;align-items:center;padding:.75rem 1.25rem;background:#14213d;color:#fff}
        .top a{color:#fff;text-decoration:none}
        .brand{font-weight:700;font-size:1.15rem;letter-spacing:.02em}
        .top nav{display:flex;gap:1rem}
        .top nav a[aria-current=page]{text-decoration:underline;text-underline-offset:6px}
        .search{display:flex;gap:.4rem;flex:1 1 16rem}
        .search input{flex:1;min-width:0}
        .signout button{background:transparent;border:1px solid #8fa3c7;color:#fff}
        .who{opacity:.8}
        main{max-width:72rem;margin:0 auto;padding:1.25rem}
        main:focus{outline:none}
        h1{font-size:1.6rem;margin:.25rem 0 .5rem}
        h2{font-size:1.15rem;margin:0 0 .6rem}
        h3{font-size:1rem;margin:1.1rem 0 .4rem}
        .lede{color:var(--muted);margin-top:0}
        .card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:1rem 1.1rem;margin:0 0 1rem}
        .narrow{max-width:30rem;margin:2rem auto}
        .grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(20rem,1fr));gap:1rem}
        .figure{font-size:1.3rem;font-weight:600;margin:.1rem 0 .5rem}
        .stack{display:flex;flex-direction:column;gap:.5rem}
        input,textarea,button{font:inherit}
        input[type=search],input[type=password],textarea{padding:.45rem .6rem;border:1px solid #9aa6b8;border-radius:6px;background:#fff;color:var(--ink)}
        textarea{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;width:100%}
        button{padding:.45rem .9rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
        button.quiet{padding:.3rem .7rem}
        table{border-collapse:collapse;width:100%;font-size:.92rem}
        th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
        th{color:var(--muted);font-weight:600}
        .scroll{overflow-x:auto}
        .detail{word-break:break-word}
        .mono,.json,code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}
        .mono{word-break:break-all}
        .json{background:#0f172a;color:#e2e8f0;padding:.8rem;border-radius:8px;overflow:auto;max-height:32rem;font-size:.82rem}
        .muted{color:var(--muted)}
        .badge{display:inline-block;white-space:nowrap;padding:.05rem .5rem;border-radius:999px;font-size:.8rem;font-weight:600;background:var(--neutral-bg)}
        .badge.good{background:var(--good-bg);color:var(--good)}
        .badge.bad{background:var(--bad-bg);color:var(--bad)}
        .badge.warn{background:var(--warn-bg);color:var(--warn)}
        .alert{padding:.6rem .8rem;border-radius:8px;background:var(--neutral-bg)}
        .alert.bad{background:var(--bad-bg);color:var(--bad)}
        .alert.warn{background:var(--warn-bg);color:var(--warn)}
        .warn-text{color:var(--warn)}
        .bad-text{color:var(--bad)}
        form.inline{display:flex;gap:.25rem;flex-wrap:wrap}
        .grant-form{display:flex;gap:.75rem;flex-wrap:wrap;align-items:flex-end;margin-top:1rem}
        .grant-form label{display:flex;flex-direction:column;gap:.25rem}
        td.bad{color:var(--bad);font-weight:600}
        .owned{list-style:none;padding:0;margin:0}
        .owned-item{padding:.6rem 0;border-bottom:1px solid var(--line)}
        .owned-item:last-child{border-bottom:0}
        .product{font-weight:600}
        .plain{padding-left:1.1rem}
        .timeline{list-style:none;padding:0;margin:0;border-left:3px solid var(--line)}
        .event{position:relative;padding:.2rem 0 .55rem 1rem}
        .event::before{content:"";position:absolute;left:-8px;top:.55rem;width:13px;height:13px;border-radius:50%;background:#9aa6b8;border:2px solid #fff}
        .event.good::before{background:var(--good)}
        .event.bad::before{background:var(--bad)}
        .event.warn::before{background:var(--warn)}
        .event p{margin:.1rem 0 0;font-size:.9rem}
        .event time{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem;color:var(--muted)}
        .seq{color:#8a94a6;font-size:.8rem}
        .pager{display:flex;gap:1rem;margin-top:.6rem}
        .fields{display:grid;grid-template-columns:minmax(9rem,max-content) 1fr;gap:.25rem 1rem;margin:0}
        .fields dt{color:var(--muted)}
        .fields dd{margin:0;word-break:break-word}
        .chain{padding-left:1.2rem}
        .chain li{margin-bottom:.5rem;overflow-wrap:anywhere}
        .chart{width:100%;height:auto;display:block}
        .chart rect{fill:#4f7cc4}
        .chart.good rect{fill:#2f9e5b}
        .chart.bad rect{fill:#d0453c}
        .chart .axis{stroke:#9aa6b8;stroke-width:1}
        .chart .label{font-size:11px;fill:#5b6575}
        .chart .label.end{text-anchor:end}
        .controls{display:flex;flex-wrap:wrap;gap:.6rem 1rem;align-items:flex-end}
        .controls label{display:flex;flex-direction:column;gap:.2rem;font-size:.85rem;color:var(--muted)}
        .controls select,.controls input{font:inherit;padding:.35rem .5rem;border:1px solid #9aa6b8;border-radius:6px;background:#fff;color:var(--ink)}
        .metric-grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,26rem),1fr));gap:1rem}
        .metric-card{min-width:0}
        .small{font-size:.8rem;font-weight:400}
        h2.section{margin-top:1.5rem}
        .metric-chart{width:100%;height:auto;display:block}
        .metric-chart .gridline{stroke:#e3e7ee;stroke-width:1}
        .metric-chart .axis{stroke:#7d889a;stroke-width:1}
        .metric-chart .tick{font-size:13px;fill:#5b6575;text-anchor:end}
        .metric-chart .tick.x{text-anchor:middle}
        .metric-chart .axis-title{font-size:13px;fill:#5b6575;text-anchor:middle}
        .metric-chart a:hover rect{opacity:.75}
        .s0{fill:#3b6fb6;background:#3b6fb6}.s1{fill:#e08a2e;background:#e08a2e}.s2{fill:#2f9e5b;background:#2f9e5b}.s3{fill:#c2453c;background:#c2453c}
        .s4{fill:#7b5bb6;background:#7b5bb6}.s5{fill:#8c6d3f;background:#8c6d3f}.s6{fill:#d46fa8;background:#d46fa8}.s7{fill:#6b7786;background:#6b7786}
        .legend{display:flex;flex-wrap:wrap;gap:.3rem .9rem;list-style:none;padding:0;margin:0 0 .4rem;font-size:.85rem}
        .swatch{display:inline-block;width:.8rem;height:.8rem;border-radius:2px;margin-right:.35rem;vertical-align:-1px}
        .values summary{cursor:pointer;color:var(--accent);font-size:.9rem;margin-top:.4rem}
        .values table{font-size:.85rem}
        .bottom{max-width:72rem;margin:0 auto;padding:1rem 1.25rem 2rem;color:var(--muted);font-size:.85rem;text-align:center}
        big,.big{font-size:1.15rem;font-weight:600}
        @media (max-width:40rem){html{font-size:15px}.top{padding:.6rem .8rem}main{padding:.8rem}.fields{grid-template-columns:1fr}.fields dt{margin-top:.4rem}}
        """

    /// The one script: reads a chosen file into the inspector's text area (a binary receipt as
    /// base64). Without it the text area still works.
    static let script = """
        "use strict";
        document.addEventListener("DOMContentLoaded", function () {
          document.querySelectorAll("input[type=file][data-fills]").forEach(function (input) {
            input.addEventListener("change", function () {
              var target = document.getElementById(input.getAttribute("data-fills"));
              var file = input.files && input.files[0];
              if (!target || !file) { return; }
              file.arrayBuffer().then(function (buffer) {
                var bytes = new Uint8Array(buffer);
                var text = new TextDecoder("utf-8", { fatal: false }).decode(bytes).trim();
                var printable = /^[A-Za-z0-9+/=._\\-\\s]+$/.test(text);
                if (printable) { target.value = text; return; }
                var binary = "";
                for (var i = 0; i < bytes.length; i += 1) { binary += String.fromCharCode(bytes[i]); }
                target.value = btoa(binary);
              });
            });
          });
        });
        """
}
