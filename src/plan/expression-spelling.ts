/**
 * The spelling a flow expression may use: the SQL that DuckDB and PostgreSQL read alike. Plain
 * '…' strings (a quote inside doubled) and "…" names; no E'…', U&'…', B'…', X'…' or N'…'
 * strings, no $$…$$ quoting or $1 parameters, no comments, no ";". A flow then means the same on
 * every engine (U&'…' is PostgreSQL's only; E'…' escapes differ), and a person reading it sees
 * all it holds.
 *
 * NOT the guard against injection: that is the engine's own parse (Driver.checkExpression) and
 * every statement sent as one. This check only names, before any SQL runs, the spellings it
 * refuses (and the common slips: unbalanced parentheses, a list, a query), so its answer can be
 * wrong only by refusing: the engine still decides whatever it lets through.
 */
export function spellingProblem(expr: string): string | undefined {
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const ch = expr[i]!;
    const before = i > 0 ? expr[i - 1]! : '';
    if (ch === "'" || ch === '"') {
      const prefix = prefixOf(expr, i);
      if (prefix === 'u&' || (ch === "'" && ['e', 'b', 'x', 'n'].includes(prefix)))
        return ch === "'"
          ? `it uses a prefixed string such as E'…', U&'…', B'…' or X'…'; write a plain '…' string (double a ' inside it)`
          : `it uses a U&"…" name; write the name in plain "…" quotes`;
      const end = closingQuote(expr, i, ch);
      if (end < 0) return `unclosed ${ch === "'" ? 'string' : 'quoted name'}`;
      i = end;
      continue;
    }
    if (ch === ';') return 'it contains ";"';
    if ((ch === '-' && expr[i + 1] === '-') || (ch === '/' && expr[i + 1] === '*')) return 'it contains a comment';
    // $ inside a name (a$b) is part of it; anywhere else it starts $$…$$ quoting or a parameter.
    if (ch === '$' && !/[A-Za-z0-9_$]/.test(before)) return "it contains $ (a $$…$$ string or a $1 parameter); write a plain '…' string";
    if (ch === '(') depth++;
    if (ch === ')' && --depth < 0) return 'unbalanced ")"';
    if (ch === ',' && depth === 0) return 'it is a list, not one expression';
  }
  if (depth !== 0) return 'unbalanced "("';
  if (/^\s*select\b/i.test(expr)) return 'it is a query; give a condition';
  return undefined;
}

/** The name right before position i (lower case), with a `&` after it: `E'`, `U&'`, `date'`. */
function prefixOf(text: string, i: number): string {
  let j = i;
  if (text[j - 1] === '&') j--;
  let k = j;
  while (k > 0 && /[A-Za-z0-9_$]/.test(text[k - 1]!)) k--;
  return text.slice(k, i).toLowerCase();
}

function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === quote) {
      if (text[i + 1] === quote) i++;
      else return i;
    }
  }
  return -1;
}
