// The sjournal viewer. Plain script, no framework, nothing loaded from elsewhere.
//
// One rule above all: text from a journal goes into the page as text (text nodes,
// textContent), never as markup. `h` below is the only way this script builds elements, and
// it never sets innerHTML. The server has already escaped control characters and bidi
// controls in every text (as the command line does), so they show as `\x1b`, `\u{202e}`.
'use strict';
(() => {
  const TOKEN = document.querySelector('meta[name="sjournal-token"]').content;
  const main = document.getElementById('main');
  const liveBadge = document.getElementById('live');

  // ---- building the page -------------------------------------------------------------------
  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'href') e.setAttribute('href', v.startsWith('#') ? v : '#');
      else e.setAttribute(k, String(v));
    }
    return add(e, ...kids);
  }
  // Appends kids as `h` does: arrays flattened, null/undefined/false left out, text as text
  // (Element.append would show an array or null as the words "[object …]" or "null").
  function add(e, ...kids) {
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return e;
  }
  const clear = (e) => { while (e.firstChild) e.removeChild(e.firstChild); return e; };
  const link = (key, seq) => '#/session/' + encodeURIComponent(key) + (seq ? '/' + seq : '');
  const pad = (n) => String(n).padStart(2, '0');
  function when(ns) {
    if (ns === null || ns === undefined || ns === 0) return '-';
    const d = new Date(Number(ns) / 1e6);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  function clock(ns) { return when(ns).slice(11); }
  function ago(ns) {
    if (!ns) return '-';
    const s = Math.max(0, (Date.now() - Number(ns) / 1e6) / 1000);
    if (s < 60) return Math.round(s) + ' s ago';
    if (s < 3600) return Math.round(s / 60) + ' min ago';
    if (s < 86400) return Math.round(s / 3600) + ' h ago';
    return Math.round(s / 86400) + ' d ago';
  }
  function dur(ms) {
    if (ms === null || ms === undefined) return 'open';
    if (ms < 1000) return ms + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(1) + ' s';
    return Math.floor(ms / 60000) + 'm' + pad(Math.floor(ms / 1000) % 60) + 's';
  }
  const pill = (word, cls) => h('span', { class: 'pill ' + (cls || word) }, word);
  const num = (v) => h('td', { class: 'num' }, v === null || v === undefined ? '-' : v);
  const seqLink = (key, seq) => h('td', { class: 'num' }, h('a', { href: link(key, seq) }, seq));
  function table(head, rows, empty, id) {
    const t = h('table', { id: id || null }, h('tr', {}, head.map((c) => h('th', {}, c))));
    if (!rows.length) t.append(h('tr', {}, h('td', { colspan: head.length, class: 'muted' }, empty || 'none')));
    for (const r of rows) t.append(r);
    return t;
  }

  // ---- talking to the viewer ---------------------------------------------------------------
  async function api(path, body) {
    const opts = { credentials: 'same-origin', headers: { 'X-Sjournal-Token': TOKEN } };
    if (body !== undefined) {
      opts.method = 'POST';
      opts.headers['Content-Type'] = 'application/json';
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(path, opts);
    let j = null;
    try { j = await r.json(); } catch (e) { j = { error: await r.text().catch(() => r.statusText) }; }
    if (!r.ok) throw new Error((j && j.error) || r.statusText);
    return j;
  }
  function failed(err) {
    return h('div', { class: 'error' }, String(err && err.message ? err.message : err));
  }

  // ---- live updates --------------------------------------------------------------------------
  let page = null; // the page shown: { live(ev), leave() }
  function connect() {
    const es = new EventSource('/api/live');
    es.onopen = () => { liveBadge.textContent = 'live'; liveBadge.classList.remove('off'); };
    es.onerror = () => { liveBadge.textContent = 'reconnecting…'; liveBadge.classList.add('off'); };
    es.onmessage = (m) => {
      let ev;
      try { ev = JSON.parse(m.data); } catch (e) { return; }
      window.__sjournalLive = (window.__sjournalLive || 0) + 1;
      if (ev.type === 'session' && ev.records) {
        for (const r of ev.records) seen(ev.summary.key, r.seq);
      }
      if (page && page.live) page.live(ev);
    };
  }
  // When each record first reached the page (for the latency bench): key/seq -> ms.
  window.__sjournalSeen = {};
  function seen(key, seq) {
    const k = key + '/' + seq;
    if (!(k in window.__sjournalSeen)) window.__sjournalSeen[k] = Date.now();
  }

  // ---- Sessions ------------------------------------------------------------------------------
  const GROUP_ROWS = 200;
  function sessionRow(s) {
    const tr = h('tr', { 'data-key': s.key },
      h('td', {}, pill(s.status)),
      h('td', { class: 'text' }, h('a', { href: link(s.key) }, s.id),
        s.problem ? h('div', { class: 'fail' }, s.problem) : null),
      h('td', {}, when(s.first_ns)),
      h('td', {}, ago(s.last_ns)),
      num(s.records), num(s.turns + (s.open_turn ? ' (open)' : '')), num(s.compactions), num(s.tool_calls),
      h('td', { class: 'num' + (s.failures ? ' fail' : '') }, s.failures),
      num(s.subagents),
      h('td', { class: 'num' + (s.pending ? ' fail' : '') }, s.pending || ''),
      h('td', {}, s.model || ''));
    return tr;
  }
  const SESSION_HEAD = ['status', 'session', 'started', 'last event', 'records', 'turns', 'compactions',
    'tool calls', 'failures', 'subagents', 'pending', 'model'];

  function sessionsPage() {
    let data = null;
    let filter = '';
    let scopes = false;
    const expanded = new Set();
    const box = h('div');
    const counts = h('p', { class: 'muted' });
    const search = h('input', { type: 'search', placeholder: 'filter: session, project, host, model', size: 40,
      oninput: (e) => { filter = e.target.value.toLowerCase(); draw(); } });
    const scopeBox = h('input', { type: 'checkbox', onchange: (e) => { scopes = e.target.checked; draw(); } });
    add(clear(main), h('h1', {}, 'Sessions'), counts,
      h('div', { class: 'bar' }, search, h('label', {}, scopeBox, ' memory scope journals')), box);

    function shown(s) {
      if (s.scope && !scopes) return false;
      if (!filter) return true;
      return [s.id, s.project, s.host, s.model, s.status].some((x) => x && x.toLowerCase().includes(filter));
    }
    function draw() {
      if (!data) return;
      const list = data.sessions.filter(shown);
      const by = new Map();
      for (const s of list) {
        const p = s.project || '(no project)';
        if (!by.has(p)) by.set(p, new Map());
        const hosts = by.get(p);
        const hk = s.host || '(unknown host)';
        if (!hosts.has(hk)) hosts.set(hk, []);
        hosts.get(hk).push(s);
      }
      const status = {};
      for (const s of list) status[s.status] = (status[s.status] || 0) + 1;
      const ix = data.indexing;
      counts.textContent = `${list.length} session(s) under ${data.root}` +
        Object.entries(status).map(([k, v]) => ` · ${v} ${k}`).join('') +
        (ix.done ? '' : ` · reading journals ${ix.loaded}/${ix.total}…`);
      clear(box);
      for (const [p, hosts] of by) {
        const sec = h('section', { class: 'project' }, h('h2', {}, p));
        for (const [hk, rows] of hosts) {
          const id = p + '\u0000' + hk;
          const all = expanded.has(id);
          const t = table(SESSION_HEAD, (all ? rows : rows.slice(0, GROUP_ROWS)).map(sessionRow));
          sec.append(h('h3', {}, `${hk} (${rows.length})`), t);
          if (rows.length > GROUP_ROWS && !all) {
            sec.append(h('button', { onclick: () => { expanded.add(id); draw(); } }, `show all ${rows.length}`));
          }
        }
        box.append(sec);
      }
      if (!list.length) box.append(h('p', { class: 'muted' }, ix.done ? 'No sessions yet: they appear here as hooks record them.' : 'Reading the journals…'));
    }
    async function load() {
      try { data = await api('/api/sessions'); draw(); } catch (e) { add(clear(box), failed(e)); }
    }
    let timer = null;
    load();
    return {
      live(ev) {
        if (!data) return;
        if (ev.type === 'resync' || ev.type === 'indexed') { load(); return; }
        if (ev.type === 'removed') { data.sessions = data.sessions.filter((s) => s.key !== ev.key); draw(); return; }
        if (ev.type !== 'session') return;
        const s = ev.summary;
        const i = data.sessions.findIndex((x) => x.key === s.key);
        if (i >= 0) data.sessions.splice(i, 1);
        data.sessions.unshift(s);
        const row = box.querySelector(`tr[data-key="${CSS.escape(s.key)}"]`);
        if (row && i >= 0 && shown(s)) {
          const nr = sessionRow(s);
          nr.classList.add('fresh');
          row.replaceWith(nr);
        } else {
          // A new session, or one that moved group: draw again soon (several changes at once
          // draw once).
          clearTimeout(timer);
          timer = setTimeout(() => {
            draw();
            const r = box.querySelector(`tr[data-key="${CSS.escape(s.key)}"]`);
            if (r) r.classList.add('fresh');
          }, 30);
        }
      },
    };
  }

  // ---- Session ---------------------------------------------------------------------------------
  function sessionPage(key, seq) {
    let data = null;
    const head = h('div');
    const body = h('div');
    const replay = h('section', { class: 'panel', id: 'replay' });
    const latest = h('tbody');
    add(clear(main), head, replay, body);
    let slider = null, seqBox = null, atBox = null, lanes = null;
    let want = seq || null;
    let pending = null;

    function cards(s, d) {
      const c = d ? d.counts : {};
      return h('div', { class: 'cards', id: 'cards' },
        [['status', pill(s.status)], ['host', s.host || '-'], ['model', s.model || '-'],
          ['records', s.records], ['turns', s.turns + (s.open_turn ? ' (one open)' : '')],
          ['tool calls', d ? `${c.tools} (${c.failed_tools} failed)` : s.tool_calls],
          ['compactions', s.compactions], ['subagents', s.subagents],
          ['injections', d ? c.injections : '-'], ['marks', d ? c.marks : '-'],
          // How the state shown was loaded: from the session's snapshot (`used`) or not.
          ['snapshot', d ? d.snapshot : '-'],
          ['started', when(s.first_ns)], ['last event', when(s.last_ns)],
          ['ended', s.ended || 'no'], ['pending spool', s.pending || 'none']]
          .map(([k, v]) => h('div', {}, h('b', {}, k), v)));
    }
    function header(s) {
      add(clear(head), h('p', {}, h('a', { href: '#/' }, '← all sessions')),
        h('h1', {}, 'Session ', s.id), h('div', { class: 'muted' }, s.project || ''),
        s.problem ? h('p', { class: 'error' }, s.problem) : null,
        cards(s, data));
    }

    function laneBlock(d) {
      const s = d.summary;
      // The lanes span the records loaded (the newest page, and the older ones asked for).
      const t0 = d.window.first_ns || s.first_ns, span = Math.max(1, s.last_ns - t0);
      const x = (ns) => (100 * (Math.min(Math.max(ns, t0), s.last_ns) - t0) / span);
      const bar = (cls, a, b, tip) => {
        const i = h('i', { class: cls, title: tip });
        i.style.left = x(a) + '%';
        i.style.width = `max(3px, ${Math.max(0, x(b === null || b === undefined ? s.last_ns : b) - x(a))}%)`;
        return i;
      };
      const dot = (cls, a, tip) => { const i = h('i', { class: cls, title: tip }); i.style.left = x(a) + '%'; return i; };
      const lane = (label, kids) => h('div', { class: 'lane' }, h('span', { class: 'label' }, label), kids);
      lanes = h('div', { class: 'lanes' },
        lane('turns', d.turns.map((u) => bar(u.error ? 'failed' : '', u.start, u.end, `turn at seq ${u.seq}: ${u.prompt}`))),
        lane('tool calls', d.tools.map((c) => bar('tool' + (c.failed ? ' failed' : c.end === null ? ' open' : ''), c.start, c.end,
          `${c.name} (seq ${c.seq}): ${dur(c.ms)}${c.error ? ' FAILED: ' + c.error : ''}`))),
        lane('compactions', d.compactions.map((c) => bar('compaction', c.start, c.end === null ? c.start : c.end, `compaction (${c.trigger}) at seq ${c.seq}`))),
        lane('injections', d.injections.map((i) => dot('injection', i.ts, `injected at seq ${i.seq} for ${i.event || '?'}`))),
        lane('events', d.marks.map((m) => dot('mark' + (m.bad ? ' bad' : ''), m.ts, `seq ${m.seq}: ${m.label}`))));
      return lanes;
    }

    function replayPanel(d) {
      const last = d.last_seq;
      clear(replay);
      if (!last) { replay.append(h('p', { class: 'muted' }, 'No records yet.')); return; }
      const start = Math.min(want || last, last);
      slider = h('input', { type: 'range', min: 1, max: last, value: start, id: 'slider',
        oninput: () => { seqBox.value = slider.value; step(Number(slider.value)); } });
      seqBox = h('input', { type: 'number', min: 1, max: last, value: start, id: 'seq', style: null,
        onchange: () => { slider.value = seqBox.value; step(Number(seqBox.value)); } });
      const nudge = (n) => () => { const v = Math.min(last, Math.max(1, Number(slider.value) + n)); slider.value = v; seqBox.value = v; step(v); };
      atBox = h('div', { id: 'at' });
      replay.append(h('h2', {}, 'Replay: the state at any record'),
        h('div', { class: 'bar' }, h('button', { onclick: nudge(-1) }, '◀'), slider, h('button', { onclick: nudge(1) }, '▶'),
          'seq', seqBox, h('span', { class: 'muted', id: 'of' }, `of ${last}`)), atBox);
      step(start);
    }

    let stepTimer = null, stepNo = 0;
    function step(n) {
      want = n;
      history.replaceState(null, '', link(key, n));
      clearTimeout(stepTimer);
      stepTimer = setTimeout(async () => {
        const my = ++stepNo;
        try {
          const a = await api(`/api/session/${encodeURIComponent(key)}/at/${n}`);
          if (my === stepNo) drawAt(a);
        } catch (e) { if (my === stepNo) add(clear(atBox), failed(e)); }
      }, 80);
    }

    function drawAt(a) {
      const r = a.record;
      const changes = a.changes.filter((c) => !c.bookkeeping);
      const val = (v) => (v === null || v === undefined ? '' : JSON.stringify(v));
      const inj = a.injection;
      const injText = {
        match: 're-derived identically from the journal',
        differs: 'DIFFERS from what the journal re-derives',
        'other-version': 'made by another renderer version: shown, not compared',
        'not-journaled': 'nothing journaled; the policy derives this',
        spooled: 'the event was spooled; nothing was injected',
      };
      add(clear(atBox), 
        h('div', { class: 'cards' },
          h('div', {}, h('b', {}, 'record'), h('span', { id: 'at-seq' }, r.seq), ' ', r.kind),
          h('div', {}, h('b', {}, 'time'), when(r.ts)),
          h('div', {}, h('b', {}, 'record hash'), h('span', { class: 'mono' }, r.hash.slice(0, 16))),
          h('div', {}, h('b', {}, 'state hash after it'), h('span', { class: 'mono', id: 'state-hash', title: a.state_hash }, a.state_hash.slice(0, 16))),
          h('div', {}, h('b', {}, 'turns'), h('span', { id: 'at-turns' }, a.state.turns ? a.state.turns.count : 0)),
          h('div', {}, h('b', {}, 'tool calls'), a.state.tools ? a.state.tools.calls : 0)),
        h('h3', {}, `What seq ${r.seq} changed`),
        changes.length
          ? h('table', { class: 'changes' }, h('tr', {}, h('th', {}, 'field'), h('th', {}, 'change'), h('th', {}, 'before'), h('th', {}, 'after')),
            changes.slice(0, 200).map((c) => h('tr', {}, h('td', {}, c.path), h('td', {}, c.op), h('td', { class: 'text mono' }, val(c.before)), h('td', { class: 'text mono' }, val(c.after)))))
          : h('p', { class: 'muted' }, 'Nothing but the counters.'),
        inj ? h('div', {}, h('h3', {}, `Injected for seq ${inj.event_seq} `, pill(inj.status)),
          h('p', {}, injText[inj.status] || inj.status, inj.journaled_blake3 ? h('span', { class: 'mono muted' }, ` blake3 ${inj.journaled_blake3.slice(0, 16)}`) : null),
          h('pre', { id: 'injected' }, inj.journaled || inj.derived || ''),
          inj.status === 'differs' ? [h('h3', {}, 're-derived'), h('pre', {}, inj.derived || '(nothing)')] : null)
          : h('p', { class: 'muted' }, 'No context injected at this record.'),
        h('details', {}, h('summary', {}, 'The whole state after this record (JSON)'), h('pre', { id: 'state-json' }, JSON.stringify(a.state, null, 2))),
        h('h3', {}, 'The record'), h('pre', {}, JSON.stringify(r.payload, null, 2)));
      if (lanes && data) {
        let cur = lanes.querySelector('i.cursor');
        if (!cur) { cur = h('i', { class: 'cursor' }); lanes.firstChild.append(cur); }
        const s = data.summary; const t0 = data.window.first_ns || s.first_ns;
        const span = Math.max(1, s.last_ns - t0);
        cur.style.left = (100 * (Math.max(r.ts, t0) - t0) / span) + '%';
      }
    }

    // The timeline comes a page of records at a time, newest first: `older` is a page before
    // `newer`'s first record; the rows of both, in seq order.
    const ROWS = ['turns', 'tools', 'compactions', 'marks', 'injections', 'recovery'];
    function merge(older, newer) {
      for (const k of ROWS) newer[k] = older[k].filter((x) => x.seq < newer.window.from).concat(newer[k]);
      if (older.window.from < newer.window.from) {
        newer.window.from = older.window.from;
        newer.window.older = older.window.older;
        newer.window.first_ns = older.window.first_ns || newer.window.first_ns;
      }
      return newer;
    }
    let loadingOlder = false;
    async function older() {
      if (!data || loadingOlder || !data.window.older) return;
      loadingOlder = true;
      try {
        const o = await api(`/api/session/${encodeURIComponent(key)}/timeline?before=${data.window.from}`);
        data = merge(o, data);
        tables(data);
      } catch (e) { body.prepend(failed(e)); }
      loadingOlder = false;
    }
    function pager(d) {
      return h('div', { class: 'bar', id: 'pager' },
        h('span', { class: 'muted', id: 'window' }, `records ${d.window.from}–${d.last_seq} of ${d.last_seq} shown`),
        d.window.older ? h('button', { id: 'load-older', onclick: older }, `load older (before seq ${d.window.from})`)
          : h('span', { class: 'muted' }, ' · from the first record'));
    }

    function tables(d) {
      const c = d.counts;
      const seqTd = (n) => seqLink(key, n);
      const recovery = d.recovery.map((b) => h('div', { class: 'panel' },
        h('div', {}, `After the compaction at seq ${b.compaction_seq ?? '?'}, injected at seq `,
          h('a', { href: link(key, b.seq) }, b.seq), ` for ${b.event} (seq `, h('a', { href: link(key, b.event_seq) }, b.event_seq),
          `), ${b.chars} characters${b.truncated ? ', cut to fit' : ''}`,
          ' · ', h('a', { href: link(key, b.event_seq) }, 'check its re-derivation')),
        h('pre', { class: 'recovery' }, b.text)));
      add(clear(body), 
        h('h2', {}, 'Timeline'), pager(d), laneBlock(d),
        h('h2', {}, `Recovery blocks (${d.recovery.length})`),
        recovery.length ? recovery : h('p', { class: 'muted' }, 'No compaction was followed by a recovery block.'),
        h('h2', {}, `Turns (${c.turns}; ${d.turns.length} shown)`),
        table(['seq', 'start', 'duration', 'prompt', 'outcome'], d.turns.slice().reverse().map((u) => h('tr', {},
          seqTd(u.seq), h('td', {}, clock(u.start)), num(u.end ? dur(Math.round((u.end - u.start) / 1e6)) : 'open'),
          h('td', { class: 'text' }, u.prompt),
          u.error ? h('td', { class: 'fail' }, u.error) : h('td', { class: u.end ? 'ok' : 'muted' }, u.end ? 'done' : 'open'))), null, 'turns'),
        h('h2', {}, `Tool calls (${c.tools}, ${c.failed_tools} failed; ${d.tools.length} shown)`),
        table(['seq', 'start', 'tool', 'agent', 'duration', 'outcome'], d.tools.slice().reverse().map((t) => h('tr', {},
          seqTd(t.seq), h('td', {}, clock(t.start)), h('td', {}, t.name), h('td', {}, t.agent || ''), num(dur(t.ms)),
          t.failed ? h('td', { class: 'fail text' }, 'failed: ' + (t.error || '')) : h('td', { class: t.end ? 'ok' : 'muted' }, t.end ? 'ok' : 'no result recorded'))), null, 'tools'),
        h('h2', {}, `Compactions (${c.compactions}; ${d.compactions.length} shown)`),
        table(['seq', 'start', 'trigger', 'duration'], d.compactions.map((k) => h('tr', {},
          seqTd(k.seq), h('td', {}, clock(k.start)), h('td', {}, k.trigger), num(k.end ? dur(Math.round((k.end - k.start) / 1e6)) : '-')))),
        h('h2', {}, `Subagents (${d.subagents.length})`),
        table(['id', 'type', 'started', 'stopped', 'tool calls', 'task', 'result'], d.subagents.map((a) => h('tr', {},
          h('td', { class: 'text' }, a.id), h('td', {}, a.type || ''), a.start_seq ? seqTd(a.start_seq) : num('-'),
          a.stop_seq ? seqTd(a.stop_seq) : num('-'), num(a.tool_calls), h('td', { class: 'text' }, a.description || ''),
          h('td', { class: 'text' }, a.result || '')))),
        h('h2', {}, `Failures (${d.failures.length})`),
        table(['seq', 'tool', 'call', 'exit', 'times', 'error', 'resolved'], d.failures.map((f) => h('tr', {},
          seqTd(f.seq), h('td', {}, f.tool), h('td', { class: 'text mono' }, f.detail), num(f.exit_code), num(f.count),
          h('td', { class: 'text' }, h('pre', {}, f.error.join('\n'))), f.resolved ? seqTd(f.resolved) : h('td', { class: 'fail' }, 'no')))),
        h('h2', {}, `Files changed (${d.files.length})`),
        table(['path', 'writes', 'edits', 'lines', 'last change'], d.files.map((f) => h('tr', {},
          h('td', { class: 'text mono' }, f.path + (f.created ? ' (created)' : '')), num(f.writes), num(f.edits),
          num(`+${f.added} −${f.removed}`), seqTd(f.last_seq)))),
        h('h2', {}, `Injected context (${c.injections}; ${d.injections.length} shown)`),
        table(['seq', 'time', 'for', 'bytes', 'text'], d.injections.slice().reverse().map((i) => h('tr', {},
          seqTd(i.seq), h('td', {}, clock(i.ts)), h('td', {}, `${i.event || '?'} (seq ${i.event_seq ?? '?'})`),
          num(`${i.bytes ?? 0}${i.truncated ? ' (cut)' : ''}`), h('td', { class: 'text' }, i.text)))),
        h('h2', {}, 'Latest records (live)'),
        h('table', { id: 'latest' }, h('thead', {}, h('tr', {}, ['seq', 'time', 'kind', 'hash', 'what'].map((x) => h('th', {}, x)))), latest),
        recordsBrowser(d));
    }

    function recordRow(r) {
      return h('tr', { 'data-seq': r.seq }, seqLink(key, r.seq), h('td', {}, clock(r.ts)), h('td', {}, r.kind),
        h('td', { class: 'mono' }, r.hash.slice(0, 12)), h('td', { class: 'text' }, r.what));
    }

    function recordsBrowser(d) {
      const box = h('div');
      const tb = h('tbody');
      let from = 1;
      const go = async (f) => {
        from = Math.max(1, f);
        try {
          const r = await api(`/api/session/${encodeURIComponent(key)}/records?from=${from}&limit=100`);
          add(clear(tb), ...r.records.map(recordRow));
          pos.textContent = r.records.length ? `records ${r.records[0].seq}–${r.records[r.records.length - 1].seq} of ${d.last_seq}` : 'none';
        } catch (e) { add(clear(tb), h('tr', {}, h('td', {}, failed(e)))); }
      };
      const pos = h('span', { class: 'muted' });
      box.append(h('h2', {}, 'All records'),
        h('div', { class: 'bar' }, h('button', { onclick: () => go(1) }, 'first'), h('button', { onclick: () => go(from - 100) }, '← 100'),
          h('button', { onclick: () => go(from + 100) }, '100 →'), h('button', { onclick: () => go(Math.max(1, d.last_seq - 99)) }, 'last'), pos),
        h('table', {}, h('thead', {}, h('tr', {}, ['seq', 'time', 'kind', 'hash', 'what'].map((x) => h('th', {}, x)))), tb));
      go(1);
      return box;
    }

    async function load(first) {
      let fresh;
      try {
        fresh = await api('/api/session/' + encodeURIComponent(key));
      } catch (e) { add(clear(head), failed(e)); return; }
      // Older pages already shown stay shown.
      data = data && !first ? merge(data, fresh) : fresh;
      header(data.summary);
      if (first || !slider) replayPanel(data);
      else {
        slider.max = data.last_seq; seqBox.max = data.last_seq;
        const of = document.getElementById('of'); if (of) of.textContent = `of ${data.last_seq}`;
      }
      tables(data);
    }
    load(true);
    return {
      jump(n) {
        if (!slider) return;
        slider.value = n; seqBox.value = n; step(n);
        replay.scrollIntoView();
      },
      live(ev) {
        if (ev.type === 'resync') { load(false); return; }
        if (ev.type !== 'session' || ev.summary.key !== key) return;
        if (data) { data.summary = ev.summary; header(ev.summary); }
        for (const r of ev.records) {
          const row = recordRow(r); row.classList.add('fresh');
          latest.prepend(row);
        }
        while (latest.childNodes.length > 200) latest.removeChild(latest.lastChild);
        if (slider) {
          const follow = Number(slider.value) === Number(slider.max);
          slider.max = ev.summary.seq; seqBox.max = ev.summary.seq;
          const of = document.getElementById('of'); if (of) of.textContent = `of ${ev.summary.seq}`;
          if (follow) { slider.value = ev.summary.seq; seqBox.value = ev.summary.seq; step(ev.summary.seq); }
        } else if (!pending) {
          pending = setTimeout(() => { pending = null; load(true); }, 200);
        }
        // The tables follow at most every two seconds.
        if (!pending) pending = setTimeout(() => { pending = null; load(false); }, 2000);
      },
    };
  }

  // ---- Search --------------------------------------------------------------------------------
  function searchPage(q) {
    const results = h('div', { id: 'results' });
    const input = h('input', { type: 'search', id: 'q', size: 60, value: q || '', placeholder: 'words, "a phrase", tool:Bash, file:src/x.rs, failed:yes' });
    const form = h('form', { class: 'bar', onsubmit: (e) => { e.preventDefault(); location.hash = '#/search?q=' + encodeURIComponent(input.value); } },
      input, h('button', { class: 'primary', type: 'submit' }, 'Search'));
    add(clear(main), h('h1', {}, 'Search'), form, results);
    (async () => {
      try {
        const r = await api('/api/search?q=' + encodeURIComponent(q || ''));
        if (!r.status.available) {
          form.remove();
          results.append(h('div', { class: 'notice', id: 'search-unavailable' }, h('b', {}, 'Search is not built in. '), r.status.note));
          return;
        }
        results.append(h('p', { class: 'muted' }, `${r.status.engine}: ${r.status.note}`));
        if (q && !r.hits.length) results.append(h('p', { class: 'muted' }, 'No hits.'));
        for (const hit of r.hits) {
          const at = `${hit.session} · ${hit.seq === null ? 'not in the journal yet' : 'seq ' + hit.seq}`;
          const where = hit.key && hit.seq !== null ? h('a', { href: link(hit.key, hit.seq), class: 'hit-link' }, at) : at;
          results.append(h('div', { class: 'hit' },
            h('div', {}, where, ' · ', hit.kind, ' · ', when(hit.ts), hit.hash ? [' · ', h('span', { class: 'mono muted' }, hit.hash.slice(0, 16))] : null,
              hit.mark ? [' ', pill(hit.mark, 'pending')] : null),
            h('div', {}, hit.parts.map((p) => (p.hit ? h('mark', {}, p.text) : p.text)))));
        }
      } catch (e) { results.append(failed(e)); }
    })();
    return {};
  }

  // ---- Memory --------------------------------------------------------------------------------
  function memoryPage() {
    const box = h('div');
    add(clear(main), h('h1', {}, 'Memory review'),
      h('p', { class: 'muted' }, 'Only accepted items reach the model. Each decision here is written as `sjournal memory accept | reject | edit | forget` writes it.'), box);
    async function decide(scope, item, op, extra) {
      try {
        await api('/api/memory', Object.assign({ journal: scope.journal, op, id: item.id }, extra || {}));
        await load();
      } catch (e) { box.prepend(failed(e)); }
    }
    function itemCard(scope, it) {
      const pendingItem = it.status === 'proposed' || it.status === 'stale';
      const editor = h('div', { class: 'bar' });
      const edit = () => {
        const ta = h('textarea', { rows: 3, cols: 80, class: 'edit-text' });
        ta.value = it.text;
        add(clear(editor), ta, h('button', { class: 'primary save', onclick: () => decide(scope, it, 'edit', { text: ta.value }) }, 'Save (accepts it)'),
          h('button', { onclick: () => clear(editor) }, 'Cancel'));
      };
      return h('div', { class: 'item', 'data-id': it.id },
        h('div', {}, pill(it.status), ' ', h('span', { class: 'mono muted' }, it.id), ' · ', it.source,
          it.sessions > 1 ? ` · seen in ${it.sessions} sessions` : '', it.original ? ' · edited' : ''),
        h('div', { class: 'text' }, it.text),
        it.original ? h('div', { class: 'muted' }, 'first proposed as: ', it.original) : null,
        it.reason ? h('div', { class: 'muted' }, 'reason: ', it.reason) : null,
        it.provenance.map((p) => h('div', {},
          p.session ? (p.key ? h('a', { href: link(p.key, p.seq) }, `session ${p.session}${p.seq ? ' seq ' + p.seq : ''}`) : `session ${p.session}${p.seq ? ' seq ' + p.seq : ''}`) : 'given directly',
          p.quote ? h('blockquote', {}, p.quote) : null)),
        h('div', { class: 'bar' },
          pendingItem ? h('button', { class: 'primary accept', onclick: () => decide(scope, it, 'accept') }, 'Accept') : null,
          it.status !== 'forgotten' && it.status !== 'rejected' ? h('button', { class: 'danger reject', onclick: () => decide(scope, it, 'reject') }, 'Reject') : null,
          it.status !== 'forgotten' && it.status !== 'rejected' ? h('button', { class: 'edit', onclick: edit }, 'Edit') : null,
          it.status === 'accepted' ? h('button', { class: 'forget', onclick: () => decide(scope, it, 'forget') }, 'Forget') : null),
        editor);
    }
    async function load() {
      let r;
      try { r = await api('/api/memory'); } catch (e) { add(clear(box), failed(e)); return; }
      clear(box);
      if (!r.scopes.length) box.append(h('p', { class: 'muted' }, 'No memory yet: proposals appear here when sessions make them (or `sjournal memory propose`).'));
      for (const s of r.scopes) {
        const pendingItems = s.items.filter((i) => i.status === 'proposed' || i.status === 'stale');
        const rest = s.items.filter((i) => !(i.status === 'proposed' || i.status === 'stale'));
        box.append(h('section', { class: 'panel', 'data-journal': s.journal },
          h('h2', {}, s.name === 'global' ? 'Global memory' : 'Project memory: ', s.project || ''),
          h('h3', {}, `Pending review (${pendingItems.length})`),
          pendingItems.length ? pendingItems.map((i) => itemCard(s, i)) : h('p', { class: 'muted' }, 'Nothing awaits review.'),
          h('details', { open: rest.length < 20 ? '' : null }, h('summary', {}, `Decided (${rest.length})`), rest.map((i) => itemCard(s, i)))));
      }
    }
    load();
    return { live(ev) { if (ev.type === 'session' && ev.summary.scope) load(); } };
  }

  // ---- Verify --------------------------------------------------------------------------------
  function verifyPage() {
    const doc = h('div');
    const box = h('div', {}, h('p', { class: 'muted' }, 'Verifying every journal…'));
    const form = h('div', { class: 'panel' });
    add(clear(main), h('h1', {}, 'Verify'),
      h('p', { class: 'muted' }, 'Each journal checked as `sjournal verify` checks it: every record\'s CRC and chain link, and the witnesses kept beside it.'),
      h('h2', {}, 'Doctor'), doc, h('h2', {}, 'Journals'), box, h('h2', {}, 'Check a checkpoint'), form);
    (async () => {
      try {
        const d = await api('/api/doctor');
        if (d.unavailable) { doc.append(h('p', { class: 'muted' }, 'doctor is not available here.')); return; }
        doc.append(h('p', {}, d.ok ? h('span', { class: 'ok' }, 'doctor: all is well') : h('span', { class: 'fail' }, `doctor: ${d.findings} finding(s)`)),
          table(['status', 'check', 'what', 'fix'], d.checks.map((c) => h('tr', {},
            h('td', { class: c.status === 'fail' || c.status === 'warn' ? 'fail' : '' }, c.status),
            h('td', {}, (c.host ? c.host + ' ' : '') + c.check), h('td', { class: 'text' }, c.message), h('td', { class: 'text mono' }, c.fix || '')))));
      } catch (e) { doc.append(failed(e)); }
    })();
    (async () => {
      let r;
      try { r = await api('/api/verify'); } catch (e) { add(clear(box), failed(e)); return; }
      add(clear(box), h('p', {}, r.bad ? h('span', { class: 'fail' }, `${r.bad} journal(s) do not verify`) : h('span', { class: 'ok' }, `all ${r.journals.length} journal(s) verify`)),
        table(['verify', 'session', 'records', 'acknowledged', 'checkpoint now (seq, head)', 'finding'], r.journals.map((j) => h('tr', { 'data-key': j.key },
          h('td', {}, j.ok ? pill('ok', 'ended') : pill('BAD', 'damaged')),
          h('td', { class: 'text' }, j.scope ? j.id : h('a', { href: link(j.key) }, j.id)), num(j.records), num(j.acknowledged),
          h('td', { class: 'mono' }, `${j.last_seq} ${j.head ? j.head.slice(0, 16) : '-'}`),
          h('td', { class: 'text' }, j.ok ? '' : j.summary,
            j.witnesses && j.witnesses.length ? h('details', {}, h('summary', {}, `${j.witnesses.length} witness(es)`), h('pre', {}, JSON.stringify(j.witnesses, null, 2))) : null)))));
      const sel = h('select', {}, r.journals.map((j) => h('option', { value: j.key }, j.id)));
      const cp = h('textarea', { rows: 5, cols: 80, placeholder: 'the checkpoint text (sjournal checkpoint --session ID)' });
      const key = h('input', { type: 'text', size: 60, placeholder: 'verifier key (optional)' });
      const out = h('div');
      form.append(h('div', { class: 'bar' }, 'session', sel), cp, h('div', { class: 'bar' }, key,
        h('button', { class: 'primary', onclick: async () => {
          clear(out);
          try {
            const c = await api('/api/checkpoint', { key: sel.value, checkpoint: cp.value, pubkey: key.value || null });
            out.append(h('p', { class: c.ok ? 'ok' : 'fail' }, c.summary));
          } catch (e) { out.append(failed(e)); }
        } }, 'Check')), out);
    })();
    return {};
  }

  // ---- routing -------------------------------------------------------------------------------
  function route() {
    const hash = location.hash || '#/';
    const [path, query] = hash.slice(1).split('?');
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    const params = new URLSearchParams(query || '');
    let nav = 'sessions';
    if (parts[0] === 'session' && parts[1]) page = sessionPage(parts[1], parts[2] ? Number(parts[2]) : null);
    else if (parts[0] === 'search') { nav = 'search'; page = searchPage(params.get('q') || ''); }
    else if (parts[0] === 'memory') { nav = 'memory'; page = memoryPage(); }
    else if (parts[0] === 'verify') { nav = 'verify'; page = verifyPage(); }
    else page = sessionsPage();
    for (const a of document.querySelectorAll('nav a')) a.classList.toggle('on', a.dataset.nav === nav);
    window.scrollTo(0, 0);
  }
  // A seq link inside the session page moves the slider instead of loading the page again.
  let lastPath = null;
  window.addEventListener('hashchange', () => {
    const m = location.hash.match(/^#\/session\/([^/?]+)(?:\/(\d+))?$/);
    const cur = m ? m[1] : null;
    if (m && cur === lastPath && m[2] && page && page.jump) { page.jump(Number(m[2])); return; }
    lastPath = cur;
    route();
  });
  lastPath = (location.hash.match(/^#\/session\/([^/?]+)/) || [])[1] || null;
  connect();
  route();
})();
