// Live tables: the tables of the views that refresh by themselves (runs,
// journal, timeline, faults) or on Refresh only (scenarios). A refresh
// updates the table in place instead of drawing a new one, so it leaves the
// user's place alone: a row whose data did not change keeps its element (the
// keyboard's focus and a text selection in it stay), a changed row keeps
// every cell that renders the same, and when rows are scrolled past, the
// rows in view stay where they are on screen while rows come and go above
// them. morph and patchText update other drawn content in place the same way.
import { h } from './ui.js';

// liveTable returns an element whose update(caption, rows, empty) shows rows
// as an accessible table (a caption, column headers) with cols = [{label,
// cell(row)}], or the text empty when there are none. key(row) names a row:
// unique within one update, the same for the same row across updates. A
// cell's listeners must depend only on what the cell shows and on the row's
// key: a cell that renders the same as before is kept, listeners included.
export function liveTable(cols, key) {
  const box = h('div', {});
  let caption = null, tbody = null;
  let shown = new Map(); // key → {tr, data: the row as JSON}
  box.update = (text, rows, empty) => {
    if (!rows.length) {
      shown = new Map();
      caption = tbody = null;
      // The same text again is left as it is (a selection in it stays).
      const p = box.firstChild;
      if (!p || p.className !== 'empty' || p.textContent !== empty) box.replaceChildren(h('p', { class: 'empty' }, empty));
      return;
    }
    if (!tbody) {
      caption = h('caption', {});
      tbody = h('tbody', {});
      box.replaceChildren(h('div', { class: 'scroll' }, h('table', {}, caption,
        h('thead', {}, h('tr', {}, cols.map((c) => h('th', { scope: 'col' }, c.label)))), tbody)));
    }
    if (caption.textContent !== text) caption.textContent = text;
    const view = inView(tbody);
    const next = new Map();
    const trs = rows.map((r) => {
      const k = key(r), data = JSON.stringify(r);
      const old = shown.get(k);
      let tr;
      if (!old) tr = h('tr', {}, cols.map((c) => h('td', {}, c.cell(r))));
      else {
        tr = old.tr;
        if (old.data !== data) cols.forEach((c, i) => renew(tr.cells[i], c.cell(r)));
      }
      next.set(k, { tr, data });
      return tr;
    });
    for (const [k, old] of shown) if (!next.has(k)) old.tr.remove();
    shown = next;
    // Rows that stay in the same order are never moved: moving an element
    // takes the focus from it.
    let at = tbody.firstChild;
    for (const tr of trs) {
      if (tr === at) at = at.nextSibling;
      else tbody.insertBefore(tr, at);
    }
    const still = view.find((v) => v.tr.isConnected);
    if (still) window.scrollBy(0, still.tr.getBoundingClientRect().top - still.top);
  };
  return box;
}

// renew gives cell td the content c unless it renders the same already.
function renew(td, c) {
  const fresh = h('td', {}, c);
  if (fresh.innerHTML !== td.innerHTML) td.replaceChildren(...fresh.childNodes);
}

// inView lists the rows of tbody on screen, top to bottom, with their top
// edge, when the window is scrolled past the first row; otherwise none, so
// that at the head of a table new rows push the others down, as in any live
// list.
function inView(tbody) {
  const rows = tbody.rows;
  if (!rows.length || rows[0].getBoundingClientRect().top >= 0) return [];
  let lo = 0, hi = rows.length - 1; // the first row whose bottom is on screen
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (rows[mid].getBoundingClientRect().bottom > 0) hi = mid; else lo = mid + 1;
  }
  const out = [];
  for (let i = lo; i < rows.length; i++) {
    const top = rows[i].getBoundingClientRect().top;
    if (top >= window.innerHeight) break;
    out.push({ tr: rows[i], top });
  }
  return out;
}

// morph makes el's children render as those of fresh (a new drawing of the
// same content), keeping every node that renders the same already, so a
// text selection in it stays: an equal node is kept, an element with the
// same tag and attributes is morphed in turn, anything else is replaced by
// fresh's node. For content without listeners (a kept element keeps its
// own).
export function morph(el, fresh) {
  const news = [...fresh.childNodes];
  news.forEach((n, i) => {
    const o = el.childNodes[i];
    if (!o) el.append(n);
    else if (o.isEqualNode(n)) return;
    else if (o.nodeType === Node.ELEMENT_NODE && o.cloneNode(false).isEqualNode(n.cloneNode(false))) morph(o, n);
    else o.replaceWith(n);
  });
  while (el.childNodes.length > news.length) el.lastChild.remove();
}

// patchText makes text node t hold s, rewriting only the lines that changed
// (after a longest common run of lines), so a selection in a line that stays
// stays on its text.
export function patchText(t, s) {
  if (t.data === s) return;
  const was = t.data.split('\n'), now = s.split('\n');
  const at = [0]; // where each line starts, and where the text ends plus one
  for (const l of was) at.push(at[at.length - 1] + l.length + 1);
  t.appendData('\n'); // every line ends with a newline while it is patched
  const hunks = diffLines(was, now);
  for (let k = hunks.length - 1; k >= 0; k--) { // from the end, so earlier offsets hold
    const [i0, i1, j0, j1] = hunks[k];
    t.replaceData(at[i0], at[i1] - at[i0], now.slice(j0, j1).map((l) => l + '\n').join(''));
  }
  t.deleteData(t.length - 1, 1);
}

// diffLines returns, in order, the hunks [i0, i1, j0, j1] that turn lines a
// into lines b (a[i0..i1) becomes b[j0..j1)), keeping a longest common
// subsequence of lines. Past a million pairs of lines between the lines
// both begin and end with, those lines are one hunk.
function diffLines(a, b) {
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let q = 0;
  while (q < a.length - p && q < b.length - p && a[a.length - 1 - q] === b[b.length - 1 - q]) q++;
  const n = a.length - p - q, m = b.length - p - q;
  if (!n || !m || n * m > 1e6) return n || m ? [[p, p + n, p, p + m]] : [];
  // lcs[i * w + j]: the longest common subsequence of a[p+i..p+n) and b[p+j..p+m).
  const w = m + 1, lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i * w + j] = a[p + i] === b[p + j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const hunks = [];
  let i = 0, j = 0, hi = 0, hj = 0; // the hunk being gathered starts at hi, hj
  while (i < n || j < m) {
    if (i < n && j < m && a[p + i] === b[p + j]) {
      if (hi < i || hj < j) hunks.push([p + hi, p + i, p + hj, p + j]);
      i++; j++; hi = i; hj = j;
    } else if (j < m && (i === n || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) j++;
    else i++;
  }
  if (hi < n || hj < m) hunks.push([p + hi, p + n, p + hj, p + m]);
  return hunks;
}
