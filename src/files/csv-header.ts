/** Column names from a header record: an empty name is column<i>, duplicates numbered like DuckDB. */
export function headerNames(names: string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((n, i) => {
    const name = n.trim() === '' ? `column${i}` : n;
    const k = seen.get(name) ?? 0;
    seen.set(name, k + 1);
    return k ? `${name}_${k}` : name;
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
