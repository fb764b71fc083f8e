// The operator console: reads /ops/inbox (stats, history, DEAD and FAILED rows, a row's detail) and posts a
// requeue. No framework, no build step. Every value is written with textContent, never as HTML.
'use strict';

(function () {
  // location.origin: a page opened as http://user:pass@host/ must not resolve URLs carrying the credentials
  const api = (path) => location.origin + '/ops/inbox' + path;
  const SERIES = [['received', '--received'], ['completed', '--completed'], ['failed', '--failed'], ['dead', '--dead']];
  const REFRESH_MS = 10000;
  // rows of each status the table shows, newest first
  const SHOWN = 100;
  let subject = '';

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    Object.entries(attrs || {}).forEach(([k, v]) => {
      if (k === 'class') e.className = v; else if (k.startsWith('data-')) e.setAttribute(k, v); else e[k] = v;
    });
    children.forEach((c) => e.append(c instanceof Node ? c : document.createTextNode(c == null ? '' : String(c))));
    return e;
  }

  // Characters an identifier may hold (the contract refuses only C0 controls and DEL) that a page would not show
  // as themselves: C1 controls, zero-width and soft-hyphen characters, bidi marks and overrides (one turns "1A"
  // into what reads "A1"), the byte order mark. Shown as ⟨U+XXXX⟩, so two subjects that differ only by one never
  // look alike and an operator filters by what is really there.
  const INVISIBLE = /[\u0080-\u009F\u00AD\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]/g;
  function visible(text) {
    return text == null ? '' : String(text).replace(INVISIBLE,
      (c) => '\u27E8U+' + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0') + '\u27E9');
  }

  // a read that gets no answer is given up (a refresh waiting on it would hold every later one)
  async function getJson(path) {
    const r = await fetch(api(path), { headers: { Accept: 'application/json' }, credentials: 'same-origin',
      signal: AbortSignal.timeout(REFRESH_MS * 2) });
    if (!r.ok) throw new Error(path + ' answered ' + r.status);
    return r.json();
  }

  function csrfToken() {
    const m = document.cookie.match(/(?:^|;\s*)XSRF-TOKEN=([^;]+)/);
    return m ? decodeURIComponent(m[1]) : '';
  }

  function age(seconds) {
    if (seconds < 60) return seconds + ' s';
    if (seconds < 3600) return Math.floor(seconds / 60) + ' min';
    return (seconds / 3600).toFixed(1) + ' h';
  }

  function time(iso) {
    return iso ? new Date(iso).toLocaleString() : '';
  }

  function showMessage(text, ok) {
    const m = document.getElementById('message');
    m.textContent = text;
    m.classList.toggle('ok', !!ok);
    m.hidden = !text;
  }

  async function loadStats() {
    const stats = await getJson('/stats');
    document.querySelectorAll('#counts .count[data-status]').forEach((box) => {
      box.querySelector('.value').textContent = stats.counts[box.dataset.status] ?? 0;
    });
    document.querySelector('#oldest .value').textContent = age(stats.oldestPendingAgeSeconds);
    document.getElementById('oldest').dataset.seconds = stats.oldestPendingAgeSeconds;
    if (stats.workers) {
      document.getElementById('workers').textContent = stats.workers.busy + ' of ' + stats.workers.size + ' busy';
    }
    if (stats.circuits) {
      document.getElementById('circuits').textContent = Object.entries(stats.circuits)
        .map(([downstream, state]) => downstream + ' ' + state.toLowerCase().replace('_', '-')).join(', ');
    }
  }

  // ---- requeue many: filter -> count (dry run) -> confirm -> requeue the oldest, at most the dry run's
  // takesPerCall (the server's default per call: 100, or adapter.inbox.bulk-requeue-max when lower) ----

  function bulkFilter() {
    const filter = { status: document.getElementById('bulk-status').value };
    const error = document.getElementById('bulk-error').value.trim();
    const code = document.getElementById('bulk-code').value.trim();
    const prefix = document.getElementById('bulk-prefix').value.trim();
    // datetime-local is the operator's local time without an offset: sent as an instant (ISO-8601, UTC)
    const from = document.getElementById('bulk-from').value;
    const to = document.getElementById('bulk-to').value;
    if (error) { filter.lastErrorContains = error; }
    if (code) { filter.lastErrorCode = code; }
    if (prefix) { filter.srvyDrawupNoPrefix = prefix; }
    if (from) { filter.receivedFrom = new Date(from).toISOString(); }
    if (to) { filter.receivedTo = new Date(to).toISOString(); }
    return filter;
  }

  async function bulkPost(body) {
    const r = await fetch(api('/requeue'), {
      method: 'POST', credentials: 'same-origin',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', 'X-XSRF-TOKEN': csrfToken() },
      body: JSON.stringify(body),
    });
    let answer = {};
    try { answer = await r.json(); } catch (e) { /* no body */ }
    return { ok: r.ok, status: r.status, body: answer };
  }

  function bulkMessage(...children) {
    const m = document.getElementById('bulk-result');
    m.replaceChildren(...children);
    m.hidden = children.length === 0;
  }

  async function bulkCount() {
    const filter = bulkFilter();
    const r = await bulkPost({ ...filter, dryRun: true });
    if (!r.ok) {
      bulkMessage('Not counted: ' + r.status + ' ' + (r.body.error || r.body.resultMessage || ''));
      return;
    }
    const n = r.body.matching;
    if (n === 0) {
      bulkMessage('No ' + filter.status + ' row matches.');
      return;
    }
    const take = Math.min(n, r.body.takesPerCall);
    const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'bulk-confirm' }, 'yes, requeue up to ' + take);
    const no = el('button', { type: 'button', 'data-action': 'bulk-cancel' }, 'cancel');
    no.addEventListener('click', () => bulkMessage());
    // once: a second click (or a double click) would take rows matching since the count, never confirmed
    yes.addEventListener('click', () => {
      yes.disabled = true;
      no.disabled = true;
      bulkRequeue(filter, take);
    });
    bulkMessage((r.body.countCapped ? 'More than ' : '') + n + ' ' + filter.status + ' rows match'
      + (n > take ? ' (the oldest ' + take + ' are taken per call)' : '') + '. ',
      yes, ' ', no);
  }

  // at most the number the operator confirmed, the oldest matching when clicked: rows that came to match since the
  // count (another operator's requeue, new DEAD rows) may be among them, as docs/operations.md says
  async function bulkRequeue(filter, take) {
    let r;
    try {
      r = await bulkPost({ ...filter, limit: take, dryRun: false });
    } catch (e) {
      bulkMessage('Not known whether requeued: the service did not answer (' + e.message + '); count again to see what still matches.');
      return;
    }
    bulkMessage(r.ok
      ? 'Requeued ' + r.body.requeued + ' rows' + (r.body.remaining ? '; ' + r.body.remaining + ' still match (count again to take more)' : '') + '.'
      : 'Not requeued: ' + r.status + ' ' + (r.body.error || r.body.resultMessage || ''));
    await refresh();
  }

  async function loadChart() {
    const data = (await getJson('/history?minutes=60')).minutes;
    const canvas = document.getElementById('chart');
    const ratio = window.devicePixelRatio || 1;
    const width = canvas.clientWidth || 600;
    const height = canvas.clientHeight || 220;
    canvas.width = width * ratio;
    canvas.height = height * ratio;
    const g = canvas.getContext('2d');
    g.scale(ratio, ratio);
    g.clearRect(0, 0, width, height);
    const css = getComputedStyle(document.documentElement);
    const left = 40, bottom = 20, top = 8, right = 8;
    const max = Math.max(1, ...data.flatMap((m) => SERIES.map(([k]) => m[k])));
    const x = (i) => left + (i * (width - left - right)) / Math.max(1, data.length - 1);
    const y = (v) => top + (1 - v / max) * (height - top - bottom);
    g.strokeStyle = css.getPropertyValue('--line');
    g.fillStyle = css.getPropertyValue('--muted');
    g.font = '11px system-ui, sans-serif';
    [0, 0.5, 1].forEach((f) => {
      const v = Math.round(max * f);
      g.beginPath(); g.moveTo(left, y(v)); g.lineTo(width - right, y(v)); g.stroke();
      g.fillText(String(v), 4, y(v) + 4);
    });
    if (data.length) {
      g.fillText(new Date(data[0].minute).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }), left, height - 4);
      const last = new Date(data[data.length - 1].minute).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      g.fillText(last, width - right - g.measureText(last).width, height - 4);
    }
    SERIES.forEach(([key, color]) => {
      g.strokeStyle = css.getPropertyValue(color);
      g.lineWidth = 2;
      g.beginPath();
      data.forEach((m, i) => (i ? g.lineTo(x(i), y(m[key])) : g.moveTo(x(i), y(m[key]))));
      g.stroke();
    });
    canvas.dataset.minutes = data.length;
  }

  async function loadRows() {
    const q = subject ? '&srvyDrawupNo=' + encodeURIComponent(subject) : '';
    // one more than is shown of each: whether more match is known, and said
    const [dead, failed] = await Promise.all([getJson('?status=DEAD&limit=' + (SHOWN + 1) + q),
      getJson('?status=FAILED&limit=' + (SHOWN + 1) + q)]);
    const rows = dead.slice(0, SHOWN).concat(failed.slice(0, SHOWN));
    const body = document.querySelector('#rows tbody');
    // an operator answering "Requeue? yes/cancel" keeps the question: the table is rebuilt after the answer
    if (body.querySelector("button[data-action='confirm']")) return false;
    const cut = [['DEAD', dead], ['FAILED', failed]].filter(([, list]) => list.length > SHOWN).map(([status]) => status);
    const more = document.getElementById('more');
    more.hidden = cut.length === 0;
    more.textContent = cut.length === 0 ? '' : 'More ' + cut.join(' and more ') + ' rows match' + (subject ? ' this subject' : '')
      + ' than the newest ' + SHOWN + ' of each shown here: filter by subject, requeue many below, or page through'
      + ' GET /ops/inbox?status=' + cut[0] + q + '&before=<the last inboxId of that status shown>' + (cut.length > 1 ? ' (and the same with status=' + cut[1] + ')' : '') + '.';
    const open = new Set([...body.querySelectorAll('tr.detail')].map((tr) => tr.dataset.for));
    body.replaceChildren();
    rows.forEach((row) => {
      body.append(rowLine(row));
      if (open.has(row.inboxId)) toggleDetail(row.inboxId, body.querySelector('tr[data-inbox-id="' + row.inboxId + '"]'));
    });
    document.getElementById('empty').hidden = rows.length > 0;
    return true;
  }

  function rowLine(row) {
    const history = el('button', { type: 'button', 'data-action': 'history' }, 'history');
    history.addEventListener('click', () => toggleDetail(row.inboxId, tr));
    const requeue = el('button', { type: 'button', class: 'danger', 'data-action': 'requeue' }, 'requeue');
    requeue.addEventListener('click', () => confirmRequeue(row, actions));
    const actions = el('td', { class: 'actions' }, history, ' ', requeue);
    const tr = el('tr', { 'data-inbox-id': row.inboxId, 'data-status': row.status },
      el('td', {}, row.inboxId), el('td', { class: 'subject' }, visible(row.srvyDrawupNo)), el('td', {}, row.msgType),
      el('td', { class: 'status-' + row.status }, row.status), el('td', {}, row.attempts),
      el('td', { class: 'error' }, row.lastError || ''), el('td', {}, row.heldReason || ''),
      el('td', {}, row.replyStatus + (row.replyReasonCode ? ' (' + row.replyReasonCode + ')' : '')),
      el('td', {}, time(row.updatedAt)), actions);
    return tr;
  }

  function confirmRequeue(row, cell) {
    const yes = el('button', { type: 'button', class: 'danger', 'data-action': 'confirm' }, 'yes, requeue ' + row.inboxId);
    const no = el('button', { type: 'button', 'data-action': 'cancel' }, 'cancel');
    const saved = [...cell.childNodes];
    no.addEventListener('click', () => cell.replaceChildren(...saved));
    yes.addEventListener('click', () => {
      cell.replaceChildren('requeueing…'); // the question is answered (no confirm button left): the next refresh rebuilds the row
      requeue(row.inboxId);
    });
    cell.replaceChildren('Requeue? ', yes, ' ', no);
  }

  async function requeue(inboxId) {
    let r;
    try {
      r = await fetch(api('/' + encodeURIComponent(inboxId) + '/requeue'), {
        method: 'POST', credentials: 'same-origin',
        headers: { Accept: 'application/json', 'X-XSRF-TOKEN': csrfToken() },
      });
    } catch (e) {
      showMessage('Inbox ' + inboxId + ': not known whether requeued, the service did not answer (' + e.message + ').', false);
      await refresh();
      return;
    }
    let body = {};
    try { body = await r.json(); } catch (e) { /* no body */ }
    if (r.ok) {
      const change = (body.audit || []).slice(-1)[0];
      showMessage(body.status === undefined ? body.resultMessage // requeued, the row not read back
        : 'Inbox ' + inboxId + ' requeued' + (change ? ' (' + change.fromStatus + ' → ' + change.toStatus + ')' : '')
        + '; now ' + body.status + '.', true);
    } else if (r.status === 409) {
      showMessage('Inbox ' + inboxId + ' not requeued (409): ' + body.error + ' — it is ' + body.status + ' now.', false);
    } else {
      showMessage('Inbox ' + inboxId + ' not requeued: ' + r.status + ' ' + (body.error || body.resultMessage || ''), false);
    }
    await refresh();
  }

  async function toggleDetail(inboxId, tr) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains('detail')) { next.remove(); return; }
    const row = await getJson('/' + encodeURIComponent(inboxId));
    const attempts = el('table', {}, el('thead', {}, el('tr', {}, ...['#', 'started', 'finished', 'outcome', 'reason'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...(row.attemptHistory || []).map((a) => el('tr', {}, el('td', {}, a.attempt), el('td', {}, time(a.startedAt)),
        el('td', {}, time(a.finishedAt)), el('td', {}, a.outcome || ''), el('td', { class: 'error' }, a.reason || '')))));
    const audit = el('table', {}, el('thead', {}, el('tr', {}, ...['at', 'operator', 'action', 'from', 'to'].map((h) => el('th', {}, h)))),
      el('tbody', {}, ...(row.audit || []).map((a) => el('tr', {}, el('td', {}, time(a.at)), el('td', {}, a.actor),
        el('td', {}, a.action), el('td', {}, a.fromStatus), el('td', {}, a.toStatus)))));
    const omitted = row.attemptHistoryOmitted ? el('p', { class: 'muted' }, row.attemptHistoryOmitted + ' earlier deferred attempts not shown') : '';
    const auditOmitted = row.auditOmitted ? el('p', { class: 'muted' }, row.auditOmitted + ' earlier audit entries not shown') : '';
    const cell = el('td', { colSpan: 10 }, el('strong', {}, 'Attempts'), omitted, attempts, el('strong', {}, 'Operator audit'),
      auditOmitted, (row.audit || []).length ? audit : el('p', { class: 'muted' }, 'none'));
    tr.after(el('tr', { class: 'detail', 'data-for': inboxId }, cell));
  }

  let refreshing = null;
  let again = false;

  // one refresh at a time: on a slow database the timer's refreshes would pile up, and an older answer landing
  // last would show older data under a newer time. Asked while one runs (after an action, a new filter), one more
  // runs after it, so what is shown follows the action
  function refresh() {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = reload().finally(() => {
      refreshing = null;
      if (again) {
        again = false;
        refresh();
      }
    });
    return refreshing;
  }

  async function reload() {
    try {
      const [, , rowsShown] = await Promise.all([loadStats(), loadChart(), loadRows()]);
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString()
        + (rowsShown ? '' : ' (rows held while a requeue question is open)');
      document.body.dataset.loaded = 'true';
    } catch (e) {
      document.getElementById('updated').textContent = 'could not refresh: ' + e.message;
    }
  }

  document.getElementById('filter').addEventListener('submit', (ev) => {
    ev.preventDefault();
    subject = document.getElementById('subject').value.trim();
    showMessage('');
    refresh();
  });
  document.getElementById('bulk').addEventListener('submit', (ev) => {
    ev.preventDefault();
    bulkCount().catch((e) => bulkMessage('Not counted: ' + e.message));
  });
  window.addEventListener('resize', () => loadChart().catch(() => {}));
  refresh();
  setInterval(refresh, REFRESH_MS);
}());
