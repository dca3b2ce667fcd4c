/**
 * Column names from a header record: an empty name is column<i>, a name already taken (by
 * `nameKey`: DuckDB's names ignore case) gets the first free suffix _1, _2, … as DuckDB's reader
 * gives it (a, A, a_1 are a, A_1, a_1_1 on DuckDB).
 */
export function headerNames(names: string[], nameKey: (name: string) => string = (n) => n): string[] {
  const taken = new Set<string>();
  return names.map((n, i) => {
    const name = n.trim() === '' ? `column${i}` : n;
    let out = name;
    for (let k = 1; taken.has(nameKey(out)); k++) out = `${name}_${k}`;
    taken.add(nameKey(out));
    return out;
  });
}

/** The fields of one CSV line (no line break inside it), unquoted. */
export function csvFields(line: string, separator = ','): string[] {
  const out: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === separator) {
      out.push(field);
      field = '';
    } else field += c;
  }
  out.push(field.replace(/\r$/, ''));
  return out;
}
