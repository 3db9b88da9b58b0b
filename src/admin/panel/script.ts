/**
 * The panel's script, served as /admin/panel.js (the page's policy runs no inline script). It
 * talks to the admin API with `Authorization: Bearer <token>`, the token kept in
 * sessionStorage (this tab only, gone when it closes), and writes every value it shows as
 * text, never as HTML. Kept in a string so the build carries it with the code.
 */
export const PANEL_JS = `
const TOKEN = 'cdapi-admin-token';
const $ = (id) => document.getElementById(id);
let companies = [];
/** A token typed in and not yet accepted: kept only once the listener accepts it. */
let typed = null;

function token() {
  return typed ?? sessionStorage.getItem(TOKEN);
}

function say(text) {
  $('message').textContent = text || '';
}

async function call(method, path, body) {
  const headers = { authorization: 'Bearer ' + token() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  const json = await response.json().catch(() => null);
  if (!response.ok) {
    const detail = json && json.detail ? json.detail : 'HTTP ' + response.status;
    const fields = json && json.errors ? json.errors.map((e) => (e.parameter || e.field) + ': ' + e.message) : [];
    throw Object.assign(new Error([detail].concat(fields).join(' ')), { status: response.status });
  }
  return json.data;
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '-' : String(text);
  row.append(td);
  return td;
}

function selectedCompany() {
  return companies.find((c) => String(c.id) === $('company').value);
}

function hideNewKey() {
  $('new-key-value').value = '';
  $('copy-state').textContent = '';
  $('new-key').hidden = true;
}

function showCompany() {
  const company = selectedCompany();
  if (!company) return;
  $('company-status').textContent = company.active ? 'active' : 'inactive';
  $('toggle-status').textContent = company.active ? 'Deactivate company' : 'Activate company';
  $('keys-caption').textContent = 'Keys of ' + company.name + ' (company ' + company.id + ')';
}

async function loadKeys() {
  const company = selectedCompany();
  if (!company) return;
  const keys = await call('GET', '/admin/companies/' + company.id + '/keys');
  const body = $('keys').tBodies[0];
  body.replaceChildren();
  for (const key of keys) {
    const row = document.createElement('tr');
    row.dataset.keyId = String(key.id);
    if (key.revoked_at) row.className = 'revoked';
    cell(row, key.prefix + '…');
    cell(row, key.name);
    cell(row, key.scopes.join(', '));
    cell(row, key.per_minute);
    cell(row, key.per_hour);
    cell(row, key.created_at);
    cell(row, key.last_used_at || 'never');
    cell(row, key.revoked_at);
    const action = cell(row, '');
    if (!key.revoked_at) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = 'Revoke';
      button.setAttribute('aria-label', 'Revoke key ' + key.name + ' (' + key.prefix + '…)');
      button.addEventListener('click', () => confirmRevoke(key));
      action.append(button);
    }
    body.append(row);
  }
}

async function loadCompanies() {
  companies = await call('GET', '/admin/companies');
  const select = $('company');
  const previous = select.value;
  select.replaceChildren();
  for (const company of companies) {
    const option = document.createElement('option');
    option.value = String(company.id);
    option.textContent = company.name + ' (' + company.id + ')' + (company.active ? '' : ', inactive');
    select.append(option);
  }
  if (companies.some((c) => String(c.id) === previous)) select.value = previous;
  $('company-section').hidden = false;
  $('keys-section').hidden = companies.length === 0;
  if (companies.length === 0) say('No company yet: import one first.');
  showCompany();
  await loadKeys();
}

async function signIn() {
  say('');
  const trying = typed;
  try {
    await loadCompanies();
    if (trying !== null) sessionStorage.setItem(TOKEN, trying);
    $('token-state').textContent = 'Signed in.';
  } catch (error) {
    // A token not accepted is not kept: a reload would send it again, and each refusal counts
    // towards the address's limit of failed tokens. A kept one the listener now refuses goes.
    if (trying === null && error.status === 401) sessionStorage.removeItem(TOKEN);
    hideData();
    $('token-state').textContent = 'Not signed in.';
    say(error.message);
  } finally {
    typed = null;
  }
}

/** Out of the page, not only out of sight: what the token showed goes with it. */
function hideData() {
  $('company-section').hidden = true;
  $('keys-section').hidden = true;
  $('keys').tBodies[0].replaceChildren();
  $('company').replaceChildren();
}

function confirmRevoke(key) {
  const dialog = $('confirm-revoke');
  $('confirm-text').textContent =
    'Key "' + key.name + '" (' + key.prefix + '…) will be refused at once by every instance. This cannot be undone.';
  dialog.returnValue = '';
  dialog.onclose = async () => {
    if (dialog.returnValue !== 'revoke') return;
    try {
      await call('POST', '/admin/keys/' + key.id + '/revoke');
      say('');
      await loadKeys();
    } catch (error) {
      say(error.message);
    }
  };
  dialog.showModal();
}

async function copyKey() {
  const input = $('new-key-value');
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    // Without the clipboard API (plain HTTP by a host name), the selection is copied.
    input.select();
    document.execCommand('copy');
  }
  $('copy-state').textContent = 'Copied.';
}

$('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  sessionStorage.removeItem(TOKEN);
  typed = $('token').value;
  $('token').value = '';
  signIn();
});

$('forget-token').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN);
  hideNewKey();
  hideData();
  $('token-state').textContent = 'Signed out.';
});

$('company').addEventListener('change', () => {
  hideNewKey();
  say('');
  showCompany();
  loadKeys().catch((error) => say(error.message));
});

$('toggle-status').addEventListener('click', async () => {
  const company = selectedCompany();
  if (!company) return;
  try {
    await call('POST', '/admin/companies/' + company.id + (company.active ? '/deactivate' : '/activate'));
    await loadCompanies();
  } catch (error) {
    say(error.message);
  }
});

$('create-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const company = selectedCompany();
  const scopes = [...document.querySelectorAll('input[name=scopes]:checked')].map((box) => box.value);
  if (scopes.length === 0) {
    say('Choose at least one scope.');
    return;
  }
  try {
    const created = await call('POST', '/admin/companies/' + company.id + '/keys', {
      name: $('key-name').value,
      scopes,
      per_minute: Number($('per-minute').value),
      per_hour: Number($('per-hour').value),
    });
    say('');
    $('key-name').value = '';
    $('new-key-value').value = created.key;
    $('new-key').hidden = false;
    $('new-key-value').focus();
    $('new-key-value').select();
    await loadKeys();
  } catch (error) {
    say(error.message);
  }
});

$('copy-key').addEventListener('click', copyKey);
$('dismiss-key').addEventListener('click', hideNewKey);

if (token()) signIn();
`;
