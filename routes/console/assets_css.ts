// The console's stylesheet (served by assets.ts under a content-hashed name): readable on a phone and a wide
// screen, visible focus, colours with at least 4.5:1 contrast.

export const consoleCss = `
:root{--fg:#1b1f24;--muted:#4a5260;--bg:#fff;--panel:#f4f6f8;--line:#d0d7de;--accent:#0b5cad;--accent-fg:#fff;
--danger:#a40e26;--ok:#116329;--warn:#7a4d00;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
line-height:1.5;color:var(--fg);background:var(--bg)}
*{box-sizing:border-box}
body{margin:0}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,
summary:focus-visible{outline:3px solid #f2a900;outline-offset:2px}
.skip{position:absolute;left:-9999px}.skip:focus{left:1rem;top:1rem;background:var(--bg);padding:.5rem;z-index:9}
header.site{background:#0d2b45;color:#fff}
header.site .bar{max-width:72rem;margin:0 auto;padding:.6rem 1rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem;
align-items:center}
header.site a{color:#fff;text-decoration:none}header.site a:hover{text-decoration:underline}
header.site .brand{font-weight:700;font-size:1.2rem;margin-right:auto}
header.site nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem 1rem;align-items:center}
header.site form{margin:0}
header.site button{background:transparent;color:#fff;border:1px solid #9fb3c8;padding:.2rem .6rem}
main{max-width:72rem;margin:0 auto;padding:1rem}
footer.site{max-width:72rem;margin:2rem auto 1rem;padding:0 1rem;color:var(--muted);font-size:.9rem}
h1{font-size:1.7rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.3rem;margin-top:1.75rem}
h3{font-size:1.1rem}
.muted{color:var(--muted)}
.notice{border-left:4px solid var(--ok);background:#eaf5ec;padding:.6rem .9rem;margin:0 0 1rem}
.errors{border-left:4px solid var(--danger);background:#fbeaec;padding:.6rem .9rem;margin:0 0 1rem}
.errors ul{margin:.25rem 0 0;padding-left:1.2rem}
.banner{background:#fff4d6;color:var(--warn);padding:.5rem 1rem;text-align:center}
form.stack{display:grid;gap:.8rem;max-width:36rem}
form.inline{display:inline}
label{font-weight:600;display:block}
.check label{display:inline;font-weight:400}
input[type=text],input[type=password],input[type=search],input[type=url],input[type=email],select,textarea{
width:100%;padding:.45rem .55rem;border:1px solid #6e7781;border-radius:4px;font:inherit;background:#fff;color:var(--fg)}
textarea{min-height:8rem}
.hint{font-weight:400;color:var(--muted);font-size:.9rem}
button,.button{display:inline-block;font:inherit;padding:.45rem .9rem;border-radius:4px;border:1px solid var(--accent);
background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.danger,.button.danger{background:var(--danger);border-color:var(--danger);color:#fff}
.searchbar{display:flex;flex-wrap:wrap;gap:.5rem;align-items:flex-end;margin:0 0 1rem}
.searchbar .grow{flex:1 1 16rem}
.searchbar div{min-width:8rem}
ul.boxes{list-style:none;padding:0;margin:0;display:grid;gap:.75rem;
grid-template-columns:repeat(auto-fill,minmax(min(100%,20rem),1fr))}
ul.boxes li{border:1px solid var(--line);border-radius:6px;padding:.75rem 1rem;background:var(--panel)}
ul.boxes h3{margin:0 0 .25rem;overflow-wrap:anywhere}
.tag{display:inline-block;border:1px solid var(--line);border-radius:999px;padding:0 .55rem;font-size:.85rem;
background:#fff;color:var(--fg)}
.status-active{color:var(--ok);border-color:var(--ok)}.status-revoked{color:var(--danger);border-color:var(--danger)}
.status-unreleased{color:var(--warn);border-color:var(--warn)}
.cols{display:grid;gap:1.5rem;grid-template-columns:minmax(0,2fr) minmax(0,1fr)}
@media (max-width:48rem){.cols{grid-template-columns:minmax(0,1fr)}h1{font-size:1.4rem}}
aside.panel,section.panel{border:1px solid var(--line);border-radius:6px;padding:.75rem 1rem;background:var(--panel)}
pre,code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
pre{background:#f0f2f4;border:1px solid var(--line);padding:.6rem;white-space:pre-wrap;overflow-wrap:anywhere;
border-radius:4px}
.panel h2:first-child,.panel h3:first-child{margin-top:0}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td.hash{font-family:ui-monospace,monospace;font-size:.8rem;overflow-wrap:anywhere;max-width:18rem}
.version{border-top:1px solid var(--line);padding-top:.5rem;margin-top:1rem}
.markdown{overflow-wrap:anywhere}.markdown img{max-width:100%}
.pager{display:flex;gap:1rem;margin:1rem 0}
.secret{font-family:ui-monospace,monospace;background:#fff4d6;border:1px solid #e0c36a;padding:.5rem;
overflow-wrap:anywhere}
.qr svg{width:14rem;height:14rem;background:#fff;padding:.5rem}
progress{width:100%;height:1.25rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center}
`;
