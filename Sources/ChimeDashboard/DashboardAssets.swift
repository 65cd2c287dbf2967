/// The dashboard's stylesheet and script, embedded in the binary (no CDN, no build step)
/// and served at `/assets/dashboard.css` and `/assets/dashboard.js`.
public enum DashboardAssets {
    /// The stylesheet.
    public static let css = """
        :root { color-scheme: light dark; --ok: #1a7f37; --bad: #cf222e; --warn: #9a6700; --line: #0969da; --muted: #6e7781; }
        body { font: 14px/1.45 system-ui, sans-serif; margin: 0; }
        header { display: flex; gap: 1.5em; align-items: baseline; padding: .6em 1.2em; border-bottom: 1px solid #8884; }
        header strong { font-size: 1.1em; }
        nav a { margin-right: 1em; text-decoration: none; }
        nav a.current { font-weight: 600; text-decoration: underline; }
        main { padding: 1em 1.2em; }
        table { border-collapse: collapse; margin: .5em 0 1em; }
        th, td { text-align: left; padding: .25em .7em; border-bottom: 1px solid #8883; vertical-align: top; }
        td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; }
        .banner { padding: .5em .8em; margin: .5em 0; border-radius: 4px; border: 1px solid; }
        .banner.partial, .banner.error { border-color: var(--bad); color: var(--bad); }
        .banner.notice { border-color: var(--ok); color: var(--ok); }
        .down { color: var(--bad); font-weight: 600; }
        .up { color: var(--ok); }
        .full { color: var(--bad); font-weight: 600; }
        .muted { color: var(--muted); }
        .charts { display: flex; flex-wrap: wrap; gap: 1em; }
        figure.chart { margin: 0; }
        figure.chart svg .frame { fill: none; stroke: #8884; }
        figure.chart svg .line { fill: none; stroke: var(--line); stroke-width: 1.5; stroke-linecap: round; }
        figure.chart svg .axis, figure.chart svg .tick { stroke: currentColor; stroke-opacity: .6; }
        figure.chart svg text { fill: currentColor; font-size: 10px; }
        figure.chart svg .axis-label { font-size: 11px; }
        .id { display: inline-block; max-width: 14em; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; vertical-align: bottom; }
        dl.settings { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
        dl.settings dt { font-weight: 600; }
        dl.settings dd { margin: 0; }
        form.inline { display: inline; }
        button.danger { color: var(--bad); }
        pre { white-space: pre-wrap; word-break: break-all; max-width: 60em; }
        footer { padding: .5em 1.2em; color: var(--muted); font-size: .9em; }
        """

    /// The script: refreshes the page's `main` every `data-refresh` seconds (unless a form
    /// field has focus), and on the events page polls `/api/events` every second and adds
    /// new rows at the top. The pages work without it (server-rendered, manual refresh).
    public static let javaScript = """
        "use strict";
        (function () {
          const body = document.body;
          const seconds = Number(body.dataset.refresh || 0);
          function busy() { const a = document.activeElement; return a && (a.tagName === "INPUT" || a.tagName === "BUTTON"); }
          if (seconds > 0) {
            setInterval(async function () {
              if (document.hidden || busy()) return;
              try {
                const response = await fetch(location.href, { headers: { "Accept": "text/html" }, cache: "no-store" });
                if (!response.ok) return;
                const page = new DOMParser().parseFromString(await response.text(), "text/html");
                const fresh = page.querySelector("main");
                const current = document.querySelector("main");
                if (fresh && current) current.replaceWith(fresh);
              } catch (error) { /* the next turn tries again */ }
            }, seconds * 1000);
          }
          const tail = document.getElementById("tail");
          if (tail) {
            let after = Number(tail.dataset.after || 0);
            const recipient = tail.dataset.recipient || "";
            setInterval(async function () {
              try {
                const query = "after=" + after + (recipient ? "&recipient=" + encodeURIComponent(recipient) : "");
                const response = await fetch("/api/events?" + query, { cache: "no-store" });
                if (!response.ok) return;
                const reply = await response.json();
                for (const event of reply.events) {
                  const row = document.createElement("tr");
                  for (const text of [event.number, event.receivedAt, event.shard, event.kind, event.recipient, event.json]) {
                    const cell = document.createElement("td");
                    cell.textContent = String(text);
                    row.appendChild(cell);
                  }
                  tail.prepend(row);
                  after = Math.max(after, event.number);
                }
                while (tail.rows.length > 500) tail.deleteRow(tail.rows.length - 1);
              } catch (error) { /* the next turn tries again */ }
            }, 1000);
          }
        })();
        """
}
