import { DEFAULT_PER_HOUR, DEFAULT_PER_MINUTE, SCOPES } from '../../keys/scopes.ts';

const scopeBoxes = SCOPES.map(
  (scope, i) =>
    `<div><input type="checkbox" id="scope-${i}" name="scopes" value="${scope}" checked> <label for="scope-${i}">${scope}</label></div>`,
).join('\n          ');

/**
 * The reference panel: the API tab of a company's settings, as the HR platform's own panel
 * would show it. Plain HTML; `panel.js` (same origin, no CDN) fills it in through the admin
 * API with the token the user pastes, kept in sessionStorage and sent in a header, never a
 * cookie, so another site cannot make the browser act on the user's behalf.
 */
export const PANEL_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Company Data API: API keys</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/admin/panel.css">
  <script type="module" src="/admin/panel.js"></script>
</head>
<body>
  <header><h1>Company Data API: API keys</h1></header>
  <main>
    <section aria-labelledby="token-title">
      <h2 id="token-title">Admin token</h2>
      <form id="token-form">
        <label for="token">Admin token (kept in this tab only)</label>
        <input id="token" type="password" autocomplete="off" required>
        <button type="submit">Sign in</button>
        <button type="button" id="forget-token">Sign out</button>
      </form>
      <p id="token-state" role="status"></p>
    </section>

    <p id="message" role="alert"></p>

    <section id="company-section" aria-labelledby="company-title" hidden>
      <h2 id="company-title">Company</h2>
      <label for="company">Company</label>
      <select id="company"></select>
      <p>Status: <strong id="company-status"></strong>
        <button type="button" id="toggle-status"></button></p>
    </section>

    <section id="keys-section" aria-labelledby="keys-title" hidden>
      <h2 id="keys-title">API keys</h2>
      <!-- Wider than a phone: the table scrolls sideways in its own box, not the page. -->
      <div class="scroll" role="region" aria-labelledby="keys-caption" tabindex="0">
      <table id="keys">
        <caption id="keys-caption">Keys of the company</caption>
        <thead><tr>
          <th scope="col">Prefix</th><th scope="col">Name</th><th scope="col">Scopes</th>
          <th scope="col">Per minute</th><th scope="col">Per hour</th><th scope="col">Created</th>
          <th scope="col">Last used</th><th scope="col">Revoked</th><th scope="col">Action</th>
        </tr></thead>
        <tbody></tbody>
      </table>
      </div>

      <h2 id="create-title">Create a key</h2>
      <form id="create-form" aria-labelledby="create-title">
        <div><label for="key-name">Name</label>
          <input id="key-name" required maxlength="100" autocomplete="off"></div>
        <fieldset><legend>Scopes</legend>
          ${scopeBoxes}
        </fieldset>
        <div><label for="per-minute">Requests per minute</label>
          <input id="per-minute" type="number" min="1" step="1" value="${DEFAULT_PER_MINUTE}" required></div>
        <div><label for="per-hour">Requests per hour</label>
          <input id="per-hour" type="number" min="1" step="1" value="${DEFAULT_PER_HOUR}" required></div>
        <button type="submit">Create key</button>
      </form>

      <div id="new-key" role="region" aria-labelledby="new-key-title" hidden>
        <h3 id="new-key-title">New key: shown this once</h3>
        <p>Copy it now and store it safely; it cannot be shown again.</p>
        <label for="new-key-value">Key</label>
        <input id="new-key-value" readonly size="48">
        <button type="button" id="copy-key">Copy</button>
        <span id="copy-state" role="status"></span>
        <button type="button" id="dismiss-key">Done</button>
      </div>
    </section>

    <dialog id="confirm-revoke" aria-labelledby="confirm-title" aria-describedby="confirm-text">
      <form method="dialog">
        <h2 id="confirm-title">Revoke this key?</h2>
        <p id="confirm-text"></p>
        <button value="cancel" autofocus>Cancel</button>
        <button value="revoke" id="confirm-yes">Revoke key</button>
      </form>
    </dialog>
  </main>
</body>
</html>
`;

export const PANEL_CSS = `body { font: 15px/1.5 system-ui, sans-serif; margin: 0 auto; max-width: 72rem; padding: 1rem; color: #1b1b1b; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
table { border-collapse: collapse; width: 100%; }
.scroll { overflow-x: auto; }
input { max-width: 100%; box-sizing: border-box; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border-bottom: 1px solid #ccc; padding: .35rem .5rem; text-align: left; vertical-align: top; }
tr.revoked td { color: #666; }
form div, fieldset { margin: .5rem 0; }
label { margin-right: .5rem; }
input, select, button { font: inherit; }
button { padding: .2rem .8rem; cursor: pointer; }
:focus-visible { outline: 3px solid #1a5fb4; outline-offset: 2px; }
#message:not(:empty) { border: 1px solid #c01c28; background: #fdecea; padding: .5rem; }
#new-key { border: 2px solid #26a269; background: #eefbf2; padding: .75rem; margin-top: 1rem; }
#new-key-value { font-family: ui-monospace, monospace; }
dialog::backdrop { background: rgb(0 0 0 / .4); }
`;
