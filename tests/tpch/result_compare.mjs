// How quiver's results are compared with DuckDB's (tests/tpch and
// tests/tpcds duckdb_compare.mjs): CSV parsing of `quiver sql --format csv`
// output, DuckDB values as text, and the equality rules: numbers equal to
// 1e-9 relative (or 1e-9 absolute near zero), everything else as text (NULL
// is the empty string on both sides); rows in order, or where that fails
// only because of ties in the ORDER BY, as multisets.

// Minimal RFC 4180 CSV parser (quiver cat / sql --format csv output).
export function parseCsv(input) {
  const rows = [];
  let row = [], field = '', quoted = false, i = 0, any = false;
  while (i < input.length) {
    const c = input[i];
    if (quoted) {
      if (c === '"') {
        if (input[i + 1] === '"') { field += '"'; i += 2; continue; }
        quoted = false; i++; continue;
      }
      field += c; i++; continue;
    }
    if (c === '"') { quoted = true; any = true; i++; continue; }
    if (c === ',') { row.push(field); field = ''; any = true; i++; continue; }
    if (c === '\n' || c === '\r') {
      if (c === '\r' && input[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = ''; any = false; i++; continue;
    }
    field += c; any = true; i++;
  }
  if (any || field !== '' || row.length) { row.push(field); rows.push(row); }
  return rows;
}

// A DuckDB value as the text quiver's CSV would hold ('' for NULL).
export function text(v) {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object' && 'toString' in v) return v.toString();
  return String(v);
}

export function same(a, b) {
  if (a === b) return true;
  const x = Number(a), y = Number(b);
  if (a.trim() !== '' && b.trim() !== '' && Number.isFinite(x) && Number.isFinite(y)) {
    const d = Math.abs(x - y);
    return d <= 1e-9 * Math.max(Math.abs(x), Math.abs(y)) || d <= 1e-9;
  }
  return false;
}

export const rowsEqual = (r, s) => r.length === s.length && r.every((v, i) => same(v, s[i]));

// The same rows in some order (numbers to 9 significant digits).
export function sameAsMultisets(mine, theirs) {
  if (mine.length !== theirs.length) return false;
  const key = (r) => r.map((v) => (Number.isFinite(Number(v)) && v.trim() !== '' ? Number(v).toPrecision(9) : v)).join('\u0001');
  const a = mine.map(key).sort(), b = theirs.map(key).sort();
  return a.every((v, i) => v === b[i]);
}

// { ok, how }: equal in order, or as multisets (ties in ORDER BY).
export function compareResults(mine, theirs) {
  if (mine.length === theirs.length && mine.every((r, i) => rowsEqual(r, theirs[i]))) return { ok: true, how: 'in order' };
  if (sameAsMultisets(mine, theirs)) return { ok: true, how: 'as multisets (ties in ORDER BY)' };
  return { ok: false, how: '' };
}
