import type { PageContext } from './context.js';
import { type Html, html, raw } from './html.js';

const CSS = raw(`
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1d232a;background:#fafafa}
header{background:#1d3557;color:#fff;padding:.5em 1em;display:flex;gap:1.5em;align-items:center;flex-wrap:wrap}
header a{color:#fff;text-decoration:none}header a:hover{text-decoration:underline}
header form{margin-left:auto;display:flex;gap:.3em;align-items:center}
main{padding:1em 1.5em;max-width:1200px;box-sizing:border-box}
.wide{max-width:100%;overflow-x:auto}
h1{font-size:1.4em;margin:.2em 0 .6em}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;background:#fff;margin:.3em 0}
th,td{border:1px solid #d5d9de;padding:.25em .5em;text-align:left;vertical-align:top;overflow-wrap:anywhere;min-width:5em;max-width:30em}
th{background:#eef1f4;font-weight:600;overflow-wrap:break-word}
td.long{min-width:16em}
table.commits{font-size:.93em}table.commits th,table.commits td{min-width:2em;padding:.25em .35em}table.commits td.inputs{min-width:8em}table.commits td.time{min-width:6em}table.commits td.sum{white-space:normal}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.null{color:#999;font-style:italic}.none{color:#666;font-style:italic}
.changed{background:#fff3b0}
.insert{color:#1b7f3b}.delete{color:#b3261e}.update_preimage{color:#8a6d00}.update_postimage{color:#1d5fa8}
dl.stats{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;margin:.3em 0}
dl.stats dt{color:#555}dl.stats dd{margin:0;font-weight:600;overflow-wrap:anywhere;min-width:0}
.pager{margin:.5em 0;display:flex;gap:1em}
.error{background:#fde8e8;border:1px solid #e0a0a0;padding:.6em 1em}
pre.raw{margin:0;white-space:pre-wrap;word-break:break-all;max-width:40em}
svg{display:block;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif}
code{overflow-wrap:anywhere}
form.filters{display:flex;gap:.8em;align-items:end;flex-wrap:wrap;margin:.5em 0}
form.filters label{display:flex;flex-direction:column;font-size:.9em;color:#555}
`);

/** The page around a body: title, navigation, and the key search box (one field per key column). */
export function layout(ctx: PageContext, title: string, body: Html): Html {
  const keys = ctx.keyColumns;
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${title} · ${ctx.flow.target} · scd serve</title>
<link rel="icon" href="data:,">
<style>${CSS}</style></head>
<body><header>
<a href="/"><strong>${ctx.flow.target}</strong></a>
<a href="/as-of">As of</a>
<a href="/quarantine">Quarantine</a>
<form action="/key" method="get" role="search" aria-label="find a key">
${keys.map((k) => html`<input name="${k}" placeholder="${k}" aria-label="${k}" size="12">`)}
<button type="submit">Find key</button>
</form>
</header>
<main>${body}</main></body></html>`;
}
